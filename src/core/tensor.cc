#include "core/tensor.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade {
namespace {

// Owns one aligned allocation; the shared_ptr control block and the bytes are separate
// allocations so views into the bytes can share ownership through the same control block.
std::shared_ptr<std::byte> AllocateAligned(size_t byte_size) {
  // Round up so a kernel may read a full vector past the last element without faulting.
  const size_t padded = (byte_size + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  void* raw = ::operator new (padded == 0 ? kTensorAlignment : padded,
                              std::align_val_t{kTensorAlignment}, std::nothrow);
  if (raw == nullptr) return nullptr;
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(raw), [](std::byte* p) {
    ::operator delete (p, std::align_val_t{kTensorAlignment});
  });
}

uint32_t ReadLength(const std::byte* p) {
  uint32_t length;
  std::memcpy(&length, p, sizeof(length));  // wire format is little-endian, as is x86-64
  return length;
}

absl::StatusOr<size_t> FixedByteSize(DataType type, const Shape& shape, int64_t* count) {
  if (type == DataType::kInvalid) return absl::InvalidArgumentError("tensor has no data type");
  BRIGADE_ASSIGN_OR_RETURN(*count, ElementCount(shape));
  const size_t element = DataTypeSize(type);
  if (element == 0) return size_t{0};
  if (static_cast<uint64_t>(*count) > kMaxTensorBytes / element) {
    return absl::ResourceExhaustedError(
        StrCat("tensor of shape ", ShapeToString(shape), " exceeds the size limit"));
  }
  return static_cast<size_t>(*count) * element;
}

}  // namespace

absl::Status ValidateSerializedBytes(std::span<const std::byte> bytes, int64_t count) {
  size_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (bytes.size() - offset < sizeof(uint32_t)) {
      return absl::InvalidArgumentError(
          StrCat("BYTES data ends inside the length prefix of element ", i, " of ", count));
    }
    const uint32_t length = ReadLength(bytes.data() + offset);
    offset += sizeof(uint32_t);
    if (bytes.size() - offset < length) {
      return absl::InvalidArgumentError(StrCat("BYTES element ", i, " declares ", length,
                                               " bytes but only ", bytes.size() - offset,
                                               " remain"));
    }
    offset += length;
  }
  if (offset != bytes.size()) {
    return absl::InvalidArgumentError(StrCat("BYTES data has ", bytes.size() - offset,
                                             " trailing bytes after ", count, " elements"));
  }
  return absl::OkStatus();
}

void AppendSerializedString(std::string_view value, std::string* out) {
  const auto length = static_cast<uint32_t>(value.size());
  char prefix[sizeof(length)];
  std::memcpy(prefix, &length, sizeof(length));
  out->append(prefix, sizeof(prefix));
  out->append(value);
}

absl::StatusOr<Tensor> Tensor::Allocate(DataType type, Shape shape) {
  if (type == DataType::kBytes) {
    return absl::InvalidArgumentError("BYTES tensors need AllocateBytes with a byte size");
  }
  int64_t count = 0;
  BRIGADE_ASSIGN_OR_RETURN(size_t byte_size, FixedByteSize(type, shape, &count));
  std::shared_ptr<std::byte> storage = AllocateAligned(byte_size);
  if (storage == nullptr) {
    return absl::ResourceExhaustedError(StrCat("cannot allocate ", byte_size, " bytes"));
  }
  std::byte* data = storage.get();
  return Tensor(type, std::move(shape), count, data, byte_size, std::move(storage));
}

absl::StatusOr<Tensor> Tensor::Zeros(DataType type, Shape shape) {
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Allocate(type, std::move(shape)));
  std::memset(tensor.mutable_data(), 0, tensor.byte_size());
  return tensor;
}

absl::StatusOr<Tensor> Tensor::AllocateBytes(Shape shape, size_t byte_size) {
  BRIGADE_ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
  if (byte_size > kMaxTensorBytes) {
    return absl::ResourceExhaustedError(
        StrCat("BYTES tensor of ", byte_size, " bytes exceeds the size limit"));
  }
  std::shared_ptr<std::byte> storage = AllocateAligned(byte_size);
  if (storage == nullptr) {
    return absl::ResourceExhaustedError(StrCat("cannot allocate ", byte_size, " bytes"));
  }
  std::byte* data = storage.get();
  return Tensor(DataType::kBytes, std::move(shape), count, data, byte_size, std::move(storage));
}

absl::StatusOr<Tensor> Tensor::View(DataType type, Shape shape, void* data, size_t byte_size,
                                    std::shared_ptr<const void> owner) {
  int64_t count = 0;
  BRIGADE_ASSIGN_OR_RETURN(size_t expected, FixedByteSize(type, shape, &count));
  if (type == DataType::kBytes) {
    BRIGADE_RETURN_IF_ERROR(
        ValidateSerializedBytes({static_cast<const std::byte*>(data), byte_size}, count));
  } else if (expected != byte_size) {
    return absl::InvalidArgumentError(StrCat("shape ", ShapeToString(shape), " of ",
                                             DataTypeName(type), " needs ", expected,
                                             " bytes, got ", byte_size));
  }
  return Tensor(type, std::move(shape), count, static_cast<std::byte*>(data), byte_size,
                std::move(owner));
}

absl::StatusOr<Tensor> Tensor::Copy(DataType type, Shape shape, std::span<const std::byte> bytes) {
  // Validate against the source first so a bad size never allocates.
  BRIGADE_ASSIGN_OR_RETURN(
      Tensor view,
      View(type, std::move(shape), const_cast<std::byte*>(bytes.data()), bytes.size(), nullptr));
  return view.Clone();
}

absl::StatusOr<Tensor> Tensor::FromStrings(Shape shape, std::span<const std::string> values) {
  BRIGADE_ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
  if (count != static_cast<int64_t>(values.size())) {
    return absl::InvalidArgumentError(
        StrCat("shape ", ShapeToString(shape), " needs ", count, " strings, got ", values.size()));
  }
  std::string serialized;
  for (const std::string& value : values) AppendSerializedString(value, &serialized);
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, AllocateBytes(std::move(shape), serialized.size()));
  std::memcpy(tensor.mutable_data(), serialized.data(), serialized.size());
  return tensor;
}

absl::StatusOr<std::vector<std::string_view>> Tensor::StringValues() const {
  if (dtype_ != DataType::kBytes) {
    return absl::InvalidArgumentError(
        StrCat("StringValues on a ", DataTypeName(dtype_), " tensor"));
  }
  std::vector<std::string_view> out;
  out.reserve(static_cast<size_t>(num_elements_));
  size_t offset = 0;
  for (int64_t i = 0; i < num_elements_; ++i) {
    if (byte_size_ - offset < sizeof(uint32_t)) {
      return absl::InternalError("corrupt BYTES tensor");
    }
    const uint32_t length = ReadLength(data_ + offset);
    offset += sizeof(uint32_t);
    if (byte_size_ - offset < length) return absl::InternalError("corrupt BYTES tensor");
    out.emplace_back(reinterpret_cast<const char*>(data_ + offset), length);
    offset += length;
  }
  return out;
}

absl::StatusOr<Tensor> Tensor::SliceRows(int64_t begin, int64_t count) const {
  if (shape_.empty()) return absl::InvalidArgumentError("cannot slice a scalar tensor");
  if (begin < 0 || count < 0 || begin > shape_[0] || count > shape_[0] - begin) {
    return absl::InvalidArgumentError(StrCat("rows [", begin, ", ", begin + count,
                                             ") out of range for shape ", ShapeToString(shape_)));
  }
  Shape shape = shape_;
  shape[0] = count;
  const int64_t row_elements = shape_[0] == 0 ? 0 : num_elements_ / shape_[0];
  if (dtype_ != DataType::kBytes) {
    const size_t row_bytes = static_cast<size_t>(row_elements) * DataTypeSize(dtype_);
    return Tensor(dtype_, std::move(shape), row_elements * count,
                  data_ + static_cast<size_t>(begin) * row_bytes,
                  static_cast<size_t>(count) * row_bytes, owner_);
  }
  // BYTES: walk the length prefixes to find the byte range of the rows.
  size_t offset = 0;
  size_t start = 0;
  const int64_t first = begin * row_elements;
  const int64_t last = (begin + count) * row_elements;
  for (int64_t i = 0; i < last; ++i) {
    if (i == first) start = offset;
    offset += sizeof(uint32_t) + ReadLength(data_ + offset);
  }
  if (first == last) start = offset;
  return Tensor(dtype_, std::move(shape), row_elements * count, data_ + start, offset - start,
                owner_);
}

absl::StatusOr<Tensor> Tensor::Reshaped(Shape shape) const {
  BRIGADE_ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
  if (count != num_elements_) {
    return absl::InvalidArgumentError(
        StrCat("cannot reshape ", ShapeToString(shape_), " to ", ShapeToString(shape)));
  }
  return Tensor(dtype_, std::move(shape), count, data_, byte_size_, owner_);
}

absl::StatusOr<Tensor> Tensor::Clone() const {
  absl::StatusOr<Tensor> copy =
      dtype_ == DataType::kBytes ? AllocateBytes(shape_, byte_size_) : Allocate(dtype_, shape_);
  if (!copy.ok()) return copy.status();
  if (byte_size_ > 0) std::memcpy(copy->mutable_data(), data_, byte_size_);
  return copy;
}

absl::StatusOr<Tensor> ConcatRows(std::span<const Tensor> parts) {
  if (parts.empty()) return absl::InvalidArgumentError("nothing to concatenate");
  if (parts.size() == 1) return parts[0];
  const Tensor& first = parts[0];
  if (first.shape().empty()) return absl::InvalidArgumentError("cannot concatenate scalars");
  int64_t rows = 0;
  size_t byte_size = 0;
  for (const Tensor& part : parts) {
    if (part.dtype() != first.dtype() || part.shape().size() != first.shape().size() ||
        !std::equal(part.shape().begin() + 1, part.shape().end(), first.shape().begin() + 1)) {
      return absl::InvalidArgumentError(
          StrCat("cannot concatenate ", DataTypeName(part.dtype()), ShapeToString(part.shape()),
                 " with ", DataTypeName(first.dtype()), ShapeToString(first.shape())));
    }
    rows += part.shape()[0];
    byte_size += part.byte_size();
  }
  Shape shape = first.shape();
  shape[0] = rows;
  absl::StatusOr<Tensor> out = first.dtype() == DataType::kBytes
                                   ? Tensor::AllocateBytes(std::move(shape), byte_size)
                                   : Tensor::Allocate(first.dtype(), std::move(shape));
  if (!out.ok()) return out.status();
  std::byte* dst = out->mutable_data();
  for (const Tensor& part : parts) {
    if (part.byte_size() > 0) std::memcpy(dst, part.data(), part.byte_size());
    dst += part.byte_size();
  }
  return out;
}

}  // namespace brigade
