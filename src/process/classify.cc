#include "process/classify.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/strings.h"

namespace brigade::process {
namespace {

absl::Status CheckRows(size_t size, int64_t classes) {
  if (classes < 1) {
    return absl::InvalidArgumentError(StrCat("classes must be at least 1, got ", classes));
  }
  if (size % static_cast<size_t>(classes) != 0) {
    return absl::InvalidArgumentError(
        StrCat(size, " scores are not a whole number of rows of ", classes, " classes"));
  }
  return absl::OkStatus();
}

// a ranks before b: larger first, NaN above everything, ties to the lower index.
inline bool RanksBefore(float a, int64_t ia, float b, int64_t ib) {
  const bool a_nan = std::isnan(a);
  const bool b_nan = std::isnan(b);
  if (a_nan != b_nan) return a_nan;
  if (!a_nan && a != b) return a > b;
  return ia < ib;
}

}  // namespace

absl::Status Softmax(std::span<const float> scores, int64_t classes, std::span<float> out) {
  if (absl::Status status = CheckRows(scores.size(), classes); !status.ok()) return status;
  if (out.size() != scores.size()) {
    return absl::InvalidArgumentError(
        StrCat("softmax: output holds ", out.size(), " values, input ", scores.size()));
  }
  const size_t n = static_cast<size_t>(classes);
  for (size_t row = 0; row < scores.size(); row += n) {
    const float* in = scores.data() + row;
    float* o = out.data() + row;
    float max = in[0];
    bool nan = false;
    for (size_t i = 0; i < n; ++i) {
      nan |= std::isnan(in[i]);
      max = std::max(max, in[i]);
    }
    if (nan) {
      std::fill(o, o + n, std::nanf(""));
      continue;
    }
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
      const float e = std::exp(in[i] - max);
      o[i] = e;
      sum += e;
    }
    const float inverse = static_cast<float>(1.0 / sum);
    for (size_t i = 0; i < n; ++i) o[i] *= inverse;
  }
  return absl::OkStatus();
}

absl::Status TopK(std::span<const float> scores, int64_t classes, int64_t k,
                  std::span<float> values, std::span<int64_t> indices) {
  if (absl::Status status = CheckRows(scores.size(), classes); !status.ok()) return status;
  if (k < 1 || k > classes) {
    return absl::InvalidArgumentError(StrCat("top-k: k must be 1..", classes, ", got ", k));
  }
  const size_t rows = scores.size() / static_cast<size_t>(classes);
  if (values.size() != rows * k || indices.size() != rows * k) {
    return absl::InvalidArgumentError(StrCat("top-k: outputs hold ", values.size(), " and ",
                                             indices.size(), " values, ", rows, " rows of k=", k,
                                             " need ", rows * k));
  }
  std::vector<int64_t> order(static_cast<size_t>(classes));
  for (size_t row = 0; row < rows; ++row) {
    const float* in = scores.data() + row * classes;
    std::iota(order.begin(), order.end(), int64_t{0});
    auto before = [in](int64_t a, int64_t b) { return RanksBefore(in[a], a, in[b], b); };
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    for (int64_t j = 0; j < k; ++j) {
      values[row * k + j] = in[order[j]];
      indices[row * k + j] = order[j];
    }
  }
  return absl::OkStatus();
}

absl::Status Argmax(std::span<const float> scores, int64_t classes, std::span<int64_t> indices) {
  if (absl::Status status = CheckRows(scores.size(), classes); !status.ok()) return status;
  const size_t rows = scores.size() / static_cast<size_t>(classes);
  if (indices.size() != rows) {
    return absl::InvalidArgumentError(
        StrCat("argmax: output holds ", indices.size(), " values, ", rows, " rows need ", rows));
  }
  for (size_t row = 0; row < rows; ++row) {
    const float* in = scores.data() + row * classes;
    int64_t best = 0;
    for (int64_t i = 1; i < classes; ++i) {
      if (RanksBefore(in[i], i, in[best], best)) best = i;
    }
    indices[row] = best;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<int64_t>>> Threshold(std::span<const float> scores,
                                                            int64_t classes, float threshold) {
  if (absl::Status status = CheckRows(scores.size(), classes); !status.ok()) return status;
  std::vector<std::vector<int64_t>> out(scores.size() / static_cast<size_t>(classes));
  for (size_t row = 0; row < out.size(); ++row) {
    const float* in = scores.data() + row * classes;
    for (int64_t i = 0; i < classes; ++i) {
      if (in[i] >= threshold) out[row].push_back(i);
    }
  }
  return out;
}

}  // namespace brigade::process
