#ifndef BRIGADE_CORE_TENSOR_H_
#define BRIGADE_CORE_TENSOR_H_

// Tensor: a typed, shaped, row-major block of bytes with shared ownership of its storage.
//
// Storage is either *owned* (allocated here, 64-byte aligned so SIMD kernels and oneDNN can
// use it directly) or *borrowed* (a view into memory someone else owns, e.g. the request body a
// binary tensor arrived in). Either way the Tensor holds a shared reference to whatever keeps the
// bytes alive, so copying a Tensor is cheap (no byte copy) and a view can never dangle: slicing a
// batched output per request and answering from the request body without a copy are both safe.
//
// BYTES tensors hold their elements serialized as on the wire: for each element a 4-byte
// little-endian length followed by that many bytes. byte_size() is then the serialized size.
//
// Thread safety: a Tensor is a value; distinct Tensors may be used from distinct threads. Tensors
// sharing storage may be read concurrently; writing through mutable_data() while another Tensor
// reads the same storage is a data race, which is why only the producer of a freshly allocated
// tensor should write to it.
//
// Failure: factories return INVALID_ARGUMENT naming the problem (negative dim, size mismatch,
// overflow) and RESOURCE_EXHAUSTED when an allocation is refused; nothing here throws or aborts
// on bad input.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/shape.h"

namespace brigade {

// Alignment of every owned tensor buffer.
inline constexpr size_t kTensorAlignment = 64;

// Largest single tensor we agree to allocate. Requests are bounded far below this by the
// transport's body limit; the bound stops a hostile shape from asking for terabytes.
inline constexpr size_t kMaxTensorBytes = size_t{1} << 36;  // 64 GiB

class Tensor {
 public:
  // An empty tensor: kInvalid type, no shape, no data.
  Tensor() = default;

  // Allocates an uninitialized, 64-byte aligned tensor of a fixed-size type.
  static absl::StatusOr<Tensor> Allocate(DataType type, Shape shape);

  // Allocates a zero-filled tensor of a fixed-size type.
  static absl::StatusOr<Tensor> Zeros(DataType type, Shape shape);

  // Allocates storage for a BYTES tensor whose serialized size is `byte_size`.
  static absl::StatusOr<Tensor> AllocateBytes(Shape shape, size_t byte_size);

  // Wraps memory owned by `owner` without copying. `data` must stay valid while `owner` lives.
  // Checks that `byte_size` matches the shape (fixed-size types) or that the serialized elements
  // exactly fill it (BYTES).
  static absl::StatusOr<Tensor> View(DataType type, Shape shape, void* data, size_t byte_size,
                                     std::shared_ptr<const void> owner);

  // Copies `bytes` into a new owned tensor, with the same checks as View().
  static absl::StatusOr<Tensor> Copy(DataType type, Shape shape, std::span<const std::byte> bytes);

  // Builds a BYTES tensor from strings (serializes them).
  static absl::StatusOr<Tensor> FromStrings(Shape shape, std::span<const std::string> values);

  // Builds a fixed-size tensor from typed values.
  template <typename T>
  static absl::StatusOr<Tensor> FromValues(Shape shape, std::span<const T> values);

  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  size_t byte_size() const { return byte_size_; }
  bool empty() const { return dtype_ == DataType::kInvalid; }

  const std::byte* data() const { return data_; }
  std::byte* mutable_data() { return data_; }
  std::span<const std::byte> bytes() const { return {data_, byte_size_}; }

  // Typed view; the caller must have checked dtype() (asserted in debug builds).
  template <typename T>
  std::span<const T> values() const {
    return {reinterpret_cast<const T*>(data_), static_cast<size_t>(num_elements_)};
  }
  template <typename T>
  std::span<T> mutable_values() {
    return {reinterpret_cast<T*>(data_), static_cast<size_t>(num_elements_)};
  }

  // Elements of a BYTES tensor, as views into this tensor's storage.
  absl::StatusOr<std::vector<std::string_view>> StringValues() const;

  // Rows [begin, begin + count) along dimension 0, sharing storage (no copy for fixed-size types;
  // BYTES rows are located by walking the length prefixes).
  absl::StatusOr<Tensor> SliceRows(int64_t begin, int64_t count) const;

  // A tensor with the same bytes and a new shape of equal element count.
  absl::StatusOr<Tensor> Reshaped(Shape shape) const;

  // Deep copy into owned, aligned storage.
  absl::StatusOr<Tensor> Clone() const;

  // True when the data pointer is kTensorAlignment-aligned.
  bool aligned() const { return reinterpret_cast<uintptr_t>(data_) % kTensorAlignment == 0; }

 private:
  Tensor(DataType type, Shape shape, int64_t num_elements, std::byte* data, size_t byte_size,
         std::shared_ptr<const void> owner)
      : dtype_(type),
        shape_(std::move(shape)),
        num_elements_(num_elements),
        data_(data),
        byte_size_(byte_size),
        owner_(std::move(owner)) {}

  DataType dtype_ = DataType::kInvalid;
  Shape shape_;
  int64_t num_elements_ = 0;
  std::byte* data_ = nullptr;
  size_t byte_size_ = 0;
  std::shared_ptr<const void> owner_;
};

// Joins tensors of equal type and equal trailing dims along dimension 0 (batch assembly).
// A single part is returned as is, without a copy.
absl::StatusOr<Tensor> ConcatRows(std::span<const Tensor> parts);

// Checks that `bytes` holds exactly `count` length-prefixed BYTES elements.
absl::Status ValidateSerializedBytes(std::span<const std::byte> bytes, int64_t count);

// Appends one length-prefixed BYTES element to `out`.
void AppendSerializedString(std::string_view value, std::string* out);

template <typename T>
// NOLINTNEXTLINE(performance-unnecessary-value-param): `shape` is moved into Copy's by-value sink.
absl::StatusOr<Tensor> Tensor::FromValues(Shape shape, std::span<const T> values) {
  return Copy(DataTypeOf<T>::value, std::move(shape),
              std::as_bytes(std::span<const T>(values.data(), values.size())));
}

}  // namespace brigade

#endif  // BRIGADE_CORE_TENSOR_H_
