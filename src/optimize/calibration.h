#ifndef BRIGADE_OPTIMIZE_CALIBRATION_H_
#define BRIGADE_OPTIMIZE_CALIBRATION_H_

// Calibration for static quantization: runs the fp32 model on Brigade's engine over a data set
// with the tensors to calibrate added as graph outputs, and turns what they held into one range
// per tensor. Three methods, as in TensorRT and ONNX Runtime:
//
//   minmax      the smallest and largest value seen;
//   percentile  the magnitude below which `percentile` % of |x| falls (outliers clipped);
//   entropy     the clipping threshold whose quantization of the |x| histogram has the smallest
//               KL divergence from the unclipped histogram (TensorRT's algorithm), with as many
//               levels over [0, t] as the uint8 activation has there: 256 for a tensor that is
//               never negative (after a Relu or ReLU6), 128 otherwise; exact zeros are left out
//               of the divergence, since every grid holds 0 exactly (the zero point).
//
// percentile and entropy work on a 2048-bin histogram of |x| whose upper edge doubles (bins
// merging pairwise) when a batch exceeds it; the range they give is [min, max] clipped to
// [-t, t].
//
// Why the zeros matter: after a Relu half of a tensor's values are exactly 0. Counted in the
// first bin they make every candidate that merges that bin with its neighbours look far from
// the reference, so the divergence is smallest where no merging happens (below 256 bins, an
// eighth of the range): on max(N(0, 1), 0) the threshold fell from ~4.4 to ~1.8, clipping ~4%
// of the positive values, and MobileNetV2 lost most of its top-1 agreement (bench/results).
//
// Thread safety: RangeCollector is not thread safe; Calibrate is a free function.
// Errors: INVALID_ARGUMENT when the data set does not fit the model's input (naming both) or the
// engine cannot run the model.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "onnx/onnx_pb.h"
#include "optimize/quantizer.h"

namespace brigade::optimize {

enum class CalibrationMethod { kMinMax, kPercentile, kEntropy };

// Accumulates one tensor's values over calibration batches.
class RangeCollector {
 public:
  static constexpr int kBins = 2048;

  void Add(std::span<const float> values);
  // The range `method` picks; minmax ignores `percentile` (in %, e.g. 99.999).
  TensorRange Range(CalibrationMethod method, double percentile) const;

  int64_t count() const { return count_; }
  int64_t zeros() const { return zeros_; }  // values exactly 0 (in the first bin too)
  const std::vector<double>& histogram() const { return histogram_; }
  float histogram_max() const { return histogram_max_; }

 private:
  float min_ = 0;
  float max_ = 0;
  int64_t count_ = 0;
  int64_t zeros_ = 0;
  std::vector<double> histogram_;  // of |x| over [0, histogram_max_)
  float histogram_max_ = 0;
};

// TensorRT's KL threshold over a histogram of |x| with `bins` bins of width `bin_width`, for a
// quantization with `levels` levels over [0, t].
float EntropyThreshold(std::span<const double> histogram, float bin_width, int levels = 128);

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.999;
  int64_t batch = 16;
  int threads = 1;
};

// The ranges of `tensors` (activation names of `model`) over `samples`, shaped [N, ...] for the
// model's one input. `label` names the model in errors; `model_dir` holds its external data.
absl::StatusOr<RangeMap> Calibrate(const ::onnx::ModelProto& model, const std::string& label,
                                   const std::string& model_dir,
                                   const std::vector<std::string>& tensors, const Tensor& samples,
                                   const CalibrationOptions& options);

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_CALIBRATION_H_
