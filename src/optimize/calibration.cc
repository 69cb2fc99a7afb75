#include "optimize/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "core/status_macros.h"
#include "core/strings.h"
#include "optimize/model_runner.h"

namespace brigade::optimize {

void RangeCollector::Add(std::span<const float> values) {
  if (values.empty()) return;
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) return;  // nothing finite
  if (count_ == 0) {
    min_ = lo;
    max_ = hi;
  } else {
    min_ = std::min(min_, lo);
    max_ = std::max(max_, hi);
  }
  const float amax = std::max(std::abs(lo), std::abs(hi));
  if (histogram_.empty()) {
    histogram_.assign(kBins, 0.0);
    histogram_max_ = amax > 0 ? amax : 1.0f;
  }
  while (amax > histogram_max_) {  // double the range: bins merge pairwise into the lower half
    for (size_t i = 0; i < kBins / 2; ++i) {
      histogram_[i] = histogram_[2 * i] + histogram_[2 * i + 1];
    }
    std::fill(histogram_.begin() + kBins / 2, histogram_.end(), 0.0);
    histogram_max_ *= 2;
  }
  const float per_bin = static_cast<float>(kBins) / histogram_max_;
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    const int bin = std::min(kBins - 1, static_cast<int>(std::abs(v) * per_bin));
    histogram_[static_cast<size_t>(bin)] += 1;
    if (v == 0.0f) ++zeros_;
    ++count_;
  }
}

float EntropyThreshold(std::span<const double> histogram, float bin_width, int levels) {
  const int num_levels = std::max(levels, 1);
  const int bins = static_cast<int>(histogram.size());
  if (bins <= num_levels) return bin_width * static_cast<float>(bins);
  double best_kl = std::numeric_limits<double>::infinity();
  int best = bins;
  std::vector<double> p(static_cast<size_t>(bins));
  std::vector<double> q(static_cast<size_t>(bins));
  double tail = 0;
  for (int i = 0; i < bins; ++i) tail += histogram[static_cast<size_t>(i)];
  double head = 0;
  for (int i = 0; i < num_levels; ++i) head += histogram[static_cast<size_t>(i)];
  tail -= head;
  for (int i = num_levels; i <= bins; ++i) {
    // Reference: the first i bins with everything beyond folded into the last one.
    std::copy(histogram.begin(), histogram.begin() + i, p.begin());
    p[static_cast<size_t>(i - 1)] += tail;
    // Candidate: the first i bins merged into num_levels levels, each level's mass spread evenly
    // over the bins of it that were not empty.
    const int merged = i / num_levels;
    for (int level = 0; level < num_levels; ++level) {
      const int begin = level * merged;
      const int end = level == num_levels - 1 ? i : begin + merged;
      double mass = 0;
      int nonzero = 0;
      for (int b = begin; b < end; ++b) {
        mass += histogram[static_cast<size_t>(b)];
        nonzero += histogram[static_cast<size_t>(b)] > 0;
      }
      for (int b = begin; b < end; ++b) {
        q[static_cast<size_t>(b)] = histogram[static_cast<size_t>(b)] > 0 ? mass / nonzero : 0.0;
      }
    }
    double p_sum = 0, q_sum = 0;
    for (int b = 0; b < i; ++b) {
      p_sum += p[static_cast<size_t>(b)];
      q_sum += q[static_cast<size_t>(b)];
    }
    double kl = 0;
    if (p_sum > 0 && q_sum > 0) {
      for (int b = 0; b < i; ++b) {
        const double pb = p[static_cast<size_t>(b)] / p_sum;
        if (pb == 0) continue;
        const double qb = q[static_cast<size_t>(b)] / q_sum;
        // A reference bin the candidate left empty (the folded tail): a large finite penalty.
        kl += qb > 0 ? pb * std::log(pb / qb) : pb * 20.0;
      }
    }
    if (kl < best_kl) {
      best_kl = kl;
      best = i;
    }
    if (i < bins) tail -= histogram[static_cast<size_t>(i)];
  }
  return (static_cast<float>(best) + 0.5f) * bin_width;
}

TensorRange RangeCollector::Range(CalibrationMethod method, double percentile) const {
  TensorRange range{min_, max_};
  if (method == CalibrationMethod::kMinMax || count_ == 0) return range;
  const float bin_width = histogram_max_ / kBins;
  float threshold = histogram_max_;
  if (method == CalibrationMethod::kPercentile) {
    const double wanted = static_cast<double>(count_) * std::clamp(percentile, 0.0, 100.0) / 100.0;
    double seen = 0;
    for (int i = 0; i < kBins; ++i) {
      seen += histogram_[static_cast<size_t>(i)];
      if (seen >= wanted) {
        threshold = static_cast<float>(i + 1) * bin_width;
        break;
      }
    }
  } else {
    // Exact zeros are exact on every grid: the divergence is over the other values.
    std::vector<double> nonzero = histogram_;
    nonzero[0] = std::max(0.0, nonzero[0] - static_cast<double>(zeros_));
    threshold = EntropyThreshold(nonzero, bin_width, min_ >= 0 ? 256 : 128);
  }
  range.min = std::max(range.min, -threshold);
  range.max = std::min(range.max, threshold);
  return range;
}

absl::StatusOr<RangeMap> Calibrate(const ::onnx::ModelProto& model, const std::string& label,
                                   const std::string& model_dir,
                                   const std::vector<std::string>& tensors, const Tensor& samples,
                                   const CalibrationOptions& options) {
  std::set<std::string> graph_inputs;
  for (const auto& in : model.graph().input()) graph_inputs.insert(in.name());
  std::map<std::string, RangeCollector> collectors;
  // The copy that exposes every tensor to calibrate (graph inputs are read from the data).
  ::onnx::ModelProto exposed = model;
  exposed.mutable_graph()->clear_output();
  std::vector<std::string> outputs;
  for (const std::string& t : tensors) {
    collectors[t];
    if (graph_inputs.contains(t)) continue;
    auto* out = exposed.mutable_graph()->add_output();
    out->set_name(t);
    out->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    outputs.push_back(t);
  }
  for (const std::string& t : tensors) {
    if (graph_inputs.contains(t)) collectors[t].Add(samples.values<float>());
  }
  if (!outputs.empty()) {
    BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> runner,
                             ModelRunner::Create(exposed, label, model_dir, options.threads,
                                                 /*run_checker=*/false));
    BRIGADE_RETURN_IF_ERROR(runner->RunBatches(
        samples, options.batch, [&](std::span<const Tensor> values, int64_t) -> absl::Status {
          for (size_t i = 0; i < outputs.size() && i < values.size(); ++i) {
            if (values[i].dtype() != DataType::kFp32) continue;
            collectors[outputs[i]].Add(values[i].values<float>());
          }
          return absl::OkStatus();
        }));
  }
  RangeMap ranges;
  for (const auto& [name, collector] : collectors) {
    if (collector.count() > 0) ranges[name] = collector.Range(options.method, options.percentile);
  }
  return ranges;
}

}  // namespace brigade::optimize
