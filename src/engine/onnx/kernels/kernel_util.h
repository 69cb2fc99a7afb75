#ifndef BRIGADE_ENGINE_ONNX_KERNELS_KERNEL_UTIL_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_KERNEL_UTIL_H_

// Helpers shared by the kernels: axis normalization, reading small integer tensors known at plan
// time, broadcasting, strides, element-type dispatch and the OpenMP parallel loop.
// Thread safety: free functions; ParallelFor runs `body` on up to `threads` OpenMP threads.

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/shape.h"
#include "engine/onnx/kernels/kernel.h"

namespace brigade::engine::onnx {

// INVALID_ARGUMENT naming the node when an output the kernel described has a negative dimension
// or would take more than kMaxTensorBytes: the planner's check after each kernel is prepared,
// before it sizes or evaluates anything (a model's shapes are untrusted).
absl::Status CheckOutputSizes(const KernelContext& ctx);
// INVALID_ARGUMENT naming the node when `shape`, computed by a kernel from a model's values (a
// broadcast, a reshape target, tile repeats), has a negative dimension or more than
// kMaxTensorBytes elements: checked before the kernel computes strides or tables from it.
absl::Status CheckShapeSize(const KernelContext& ctx, const Shape& shape);

// Whether the kernel described at least one output and every one it described has no elements:
// then it has nothing to compute, and the planner runs no step for it (kernels need not handle a
// zero-sized row or block).
bool AllOutputsEmpty(const KernelContext& ctx);

// Maps a possibly negative `axis` into [0, rank); INVALID_ARGUMENT naming the node otherwise.
absl::StatusOr<int64_t> NormalizeAxis(const KernelContext& ctx, int64_t axis, int64_t rank);
// The same, but a scalar (rank 0) also takes axis 0, for ops that treat a scalar as one element
// along the axis (Softmax): the caller must not index the shape with the result.
absl::StatusOr<int64_t> NormalizeAxisOrScalar(const KernelContext& ctx, int64_t axis, int64_t rank);

// Contents of an integer (int32/int64) input known at plan time, as int64.
absl::StatusOr<std::vector<int64_t>> ConstantInts(const KernelContext& ctx, size_t input);
// Contents of a float (fp32/fp64) input known at plan time, as float.
absl::StatusOr<std::vector<float>> ConstantFloats(const KernelContext& ctx, size_t input);
// The single element of a scalar-like constant input, as double.
absl::StatusOr<double> ConstantScalar(const KernelContext& ctx, size_t input);

// Numpy-style broadcast of two shapes; INVALID_ARGUMENT naming the node when incompatible.
absl::StatusOr<Shape> BroadcastShapes(const KernelContext& ctx, const Shape& a, const Shape& b);

// Row-major strides of `shape` (in elements).
Shape Strides(const Shape& shape);
// Strides of `shape` aligned right against `rank` dims, with 0 for broadcast (size-1 or missing)
// dimensions: reading an input at an output index through these strides broadcasts it.
Shape BroadcastStrides(const Shape& shape, size_t rank);

// Product of dims [begin, end).
int64_t DimProduct(const Shape& shape, size_t begin, size_t end);

// Runs body(begin, end) over [0, n) split into at most `threads` contiguous ranges of at least
// `grain` iterations each; runs inline when one range suffices.
template <typename Body>
void ParallelFor(int threads, int64_t n, int64_t grain, Body&& body) {
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  const int chunks = static_cast<int>(std::min<int64_t>(threads, max_chunks));
  if (chunks <= 1) {
    body(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(chunks)
  {
    const int64_t t = omp_get_thread_num();
    const int64_t begin = n * t / chunks;
    const int64_t end = n * (t + 1) / chunks;
    if (begin < end) body(begin, end);
  }
}

// Calls visitor.template operator()<T>() with the C++ type of `dtype`; false when `dtype` is
// not among the numeric types (BYTES, fp16, bf16, invalid).
template <typename Visitor>
bool VisitNumeric(DataType dtype, Visitor&& visitor) {
  switch (dtype) {
    case DataType::kFp32:
      visitor.template operator()<float>();
      return true;
    case DataType::kFp64:
      visitor.template operator()<double>();
      return true;
    case DataType::kInt64:
      visitor.template operator()<int64_t>();
      return true;
    case DataType::kInt32:
      visitor.template operator()<int32_t>();
      return true;
    case DataType::kInt16:
      visitor.template operator()<int16_t>();
      return true;
    case DataType::kInt8:
      visitor.template operator()<int8_t>();
      return true;
    case DataType::kUint8:
      visitor.template operator()<uint8_t>();
      return true;
    case DataType::kUint16:
      visitor.template operator()<uint16_t>();
      return true;
    case DataType::kUint32:
      visitor.template operator()<uint32_t>();
      return true;
    case DataType::kUint64:
      visitor.template operator()<uint64_t>();
      return true;
    case DataType::kBool:
      visitor.template operator()<bool>();
      return true;
    default:
      return false;
  }
}

// Copies `bytes` with up to `threads` threads (large copies only).
void ParallelCopy(int threads, std::byte* dst, const std::byte* src, size_t bytes);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_KERNEL_UTIL_H_
