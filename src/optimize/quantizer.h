#ifndef BRIGADE_OPTIMIZE_QUANTIZER_H_
#define BRIGADE_OPTIMIZE_QUANTIZER_H_

// INT8 quantization of an ONNX model, as a rewrite of its ModelProto into standard ONNX that any
// runtime runs (Brigade's engine fuses it into u8s8 kernels where the CPU computes them exactly;
// ONNX Runtime fuses it too). Two INT8 modes, and bf16:
//
//   dynamic  MatMul / Gemm with constant weights: the weights become int8 (per output channel
//            by default), the activation is quantized at run time:
//              x ─DynamicQuantizeLinear─► (x_q, x_scale, x_zp)
//              MatMulInteger(x_q, w_q, x_zp) ─Cast─► ·(x_scale · w_scale) [+ bias] ─► y
//   static   QDQ: a QuantizeLinear → DequantizeLinear pair on each activation a Conv / MatMul /
//            Gemm reads and on what it produces (after a Relu or Clip it feeds alone, so a runtime
//            can fuse Conv+Relu+requantize), constant weights stored as int8 behind a
//            DequantizeLinear, Conv biases as int32 (scale x_scale · w_scale). Activation ranges
//            come from calibration (calibration.h): asymmetric uint8.
//   bf16     no rewrite: the graph stays fp32 and the model's metadata_props gets
//            brigade.precision = bf16, which Brigade's engine runs with bf16 multiply-adds in
//            its convolutions and constant-weight MatMul / Gemm (fp32 accumulation, on CPUs with
//            AVX-512 BF16 or AMX; fp32 elsewhere). Other runtimes run the file as fp32. The
//            precision is the whole model's: exclusions and per-layer choices do not apply.
//
// Weights are symmetric int8 (zero point 0) in [-127, 127], or [-64, 64] with reduce_range:
// 7-bit weights keep the pairwise u8·s8 sums of AVX2's vpmaddubsw inside int16, which CPUs
// without VNNI need for exact results (ONNX Runtime's reduce_range means the same).
//
// What is not quantized stays fp32 and is listed in QuantizeResult::decisions with the reason
// (an op with no INT8 form here, weights that are not constant, an exclusion, no calibrated
// range). Nodes are matched by name and op type as ONNX spells them.
//
// Thread safety: free functions. Errors: INVALID_ARGUMENT naming the model part at fault (an
// opset without the ops the mode needs, a weight that cannot be read).

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace brigade::optimize {

enum class QuantMode { kDynamic, kStatic, kBf16 };

struct QuantizeOptions {
  QuantMode mode = QuantMode::kStatic;
  // One weight scale per output channel (ONNX opset >= 13) instead of one per tensor.
  bool per_channel = true;
  // 7-bit weights, for CPUs without VNNI (see above).
  bool reduce_range = false;
  // Op types (e.g. "Gemm") and node names kept in fp32.
  std::vector<std::string> exclude_op_types;
  std::vector<std::string> exclude_nodes;
  // When not empty, only these nodes are quantized (per-layer sensitivity, fallback).
  std::vector<std::string> only_nodes;
};

// The calibrated range of one activation tensor.
struct TensorRange {
  float min = 0;
  float max = 0;
};
using RangeMap = std::map<std::string, TensorRange>;

// What happened to one node that quantization considered.
struct NodeDecision {
  std::string node;
  std::string op_type;
  bool quantized = false;
  std::string reason;  // why it stayed fp32; empty when quantized
};

struct QuantizeResult {
  ::onnx::ModelProto model;
  // Every Conv / MatMul / Gemm of the input, in graph order.
  std::vector<NodeDecision> decisions;
  // Op types left in fp32 that have no INT8 form here, with their counts.
  std::map<std::string, int> other_ops;
  std::vector<std::string> notes;  // e.g. per-channel unavailable below opset 13
};

// The activation tensors static quantization of `model` needs ranges for, in graph order.
std::vector<std::string> TensorsToCalibrate(const ::onnx::ModelProto& model,
                                            const QuantizeOptions& options);

// Quantizes `model`. `ranges` (static mode) holds the calibrated ranges; a node whose tensors
// have none stays fp32. `model_dir` is where the model's external data lives ("" refuses it).
absl::StatusOr<QuantizeResult> QuantizeModel(const ::onnx::ModelProto& model,
                                             const QuantizeOptions& options, const RangeMap& ranges,
                                             const std::string& model_dir = "");

// The scale and zero point of an asymmetric uint8 activation covering `range` (0 included).
struct QuantParams {
  float scale = 1;
  int zero_point = 0;
};
QuantParams ActivationParams(TensorRange range);

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_QUANTIZER_H_
