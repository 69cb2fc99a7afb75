#include "engine/onnx/kernels/broadcast.h"

namespace brigade::engine::onnx {

BroadcastPlan::BroadcastPlan(const Shape& output, std::span<const Shape> inputs)
    : num_inputs_(static_cast<int>(inputs.size())) {
  const size_t rank = output.size();
  std::array<Shape, kMaxOperands> strides;
  for (int k = 0; k < num_inputs_; ++k) strides[k] = BroadcastStrides(inputs[k], rank);

  // Merge dimension d into d+1 when every operand's stride at d equals its stride at d+1 times
  // the size of d+1 (contiguous across both, or broadcast across both). Size-1 dims vanish.
  Shape dims;
  std::array<Shape, kMaxOperands> merged;
  for (size_t d = 0; d < rank; ++d) {
    if (output[d] == 1) continue;
    bool can_merge = !dims.empty();
    for (int k = 0; k < num_inputs_ && can_merge; ++k) {
      can_merge = merged[k].back() == strides[k][d] * output[d];
    }
    if (can_merge) {
      dims.back() *= output[d];
      for (int k = 0; k < num_inputs_; ++k) merged[k].back() = strides[k][d];
    } else {
      dims.push_back(output[d]);
      for (int k = 0; k < num_inputs_; ++k) merged[k].push_back(strides[k][d]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (int k = 0; k < num_inputs_; ++k) merged[k].push_back(0);
  }
  row_length_ = dims.back();
  for (int k = 0; k < num_inputs_; ++k) {
    inner_strides_[k] = row_length_ == 1 ? 0 : merged[k].back();
    outer_strides_[k] = Shape(merged[k].begin(), merged[k].end() - 1);
  }
  outer_shape_ = Shape(dims.begin(), dims.end() - 1);
  for (int64_t d : outer_shape_) rows_ *= d;
  for (int64_t d : output) {
    if (d == 0) rows_ = 0;
  }
}

}  // namespace brigade::engine::onnx
