#ifndef BRIGADE_ENGINE_ONNX_KERNELS_BROADCAST_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_BROADCAST_H_

// BroadcastPlan: numpy-style broadcasting of up to three operands onto an output shape, with
// adjacent dimensions merged wherever every operand is either contiguous or broadcast across
// them. [8,128,768] + [768] becomes a loop of 1024 rows × 768 with the second operand's row
// stride 0, so the innermost loop is a plain vectorizable loop in the common cases.
//
// ForEachRow() calls row(out_offset, in_offsets, length, inner_strides) for every innermost row,
// splitting the rows across threads. Thread safety: immutable after Create.

#include <array>
#include <cstdint>
#include <span>

#include "core/shape.h"
#include "engine/onnx/kernels/kernel_util.h"

namespace brigade::engine::onnx {

class BroadcastPlan {
 public:
  static constexpr int kMaxOperands = 3;

  // `inputs` are the operand shapes (each broadcastable to `output`).
  BroadcastPlan(const Shape& output, std::span<const Shape> inputs);

  int64_t rows() const { return rows_; }
  int64_t row_length() const { return row_length_; }
  // Stride (0 or 1) of operand k along the innermost row.
  int64_t inner_stride(int k) const { return inner_strides_[static_cast<size_t>(k)]; }

  // Calls row(row_index, std::array<int64_t, kMaxOperands> offsets) for rows [begin, end):
  // offsets are the element offsets of each operand at the row's start.
  template <typename Row>
  void ForRows(int64_t begin, int64_t end, Row&& row) const {
    if (begin >= end) return;
    const size_t outer = outer_shape_.size();
    Shape index(outer, 0);
    int64_t rest = begin;
    for (size_t d = outer; d-- > 0;) {
      index[d] = rest % outer_shape_[d];
      rest /= outer_shape_[d];
    }
    std::array<int64_t, kMaxOperands> offsets{};
    for (int k = 0; k < num_inputs_; ++k) {
      for (size_t d = 0; d < outer; ++d) offsets[k] += index[d] * outer_strides_[k][d];
    }
    for (int64_t r = begin; r < end; ++r) {
      row(r, offsets);
      // Advance the odometer.
      for (size_t d = outer; d-- > 0;) {
        ++index[d];
        for (int k = 0; k < num_inputs_; ++k) offsets[k] += outer_strides_[k][d];
        if (index[d] < outer_shape_[d]) break;
        for (int k = 0; k < num_inputs_; ++k) offsets[k] -= outer_strides_[k][d] * index[d];
        index[d] = 0;
      }
    }
  }

 private:
  int num_inputs_ = 0;
  int64_t rows_ = 1;
  int64_t row_length_ = 1;
  Shape outer_shape_;
  std::array<Shape, kMaxOperands> outer_strides_;
  std::array<int64_t, kMaxOperands> inner_strides_{};
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_BROADCAST_H_
