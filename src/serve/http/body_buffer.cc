#include "serve/http/body_buffer.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace brigade::serve {
namespace {

// The same alignment as owned tensors, so a body that is one binary tensor is SIMD-friendly.
constexpr std::align_val_t kAlignment{64};

std::byte* AllocateBytes(size_t capacity_bytes) {
  return static_cast<std::byte*>(
      ::operator new(capacity_bytes + BodyBuffer::kPaddingBytes, kAlignment, std::nothrow));
}

void FreeBytes(std::byte* data) {
  if (data != nullptr) ::operator delete(data, kAlignment);
}

}  // namespace

std::shared_ptr<BodyBuffer> BodyBuffer::Allocate(size_t capacity_bytes) {
  auto buffer = std::make_shared<BodyBuffer>(Key());
  if (!buffer->Grow(capacity_bytes)) return nullptr;
  return buffer;
}

std::shared_ptr<BodyBuffer> BodyBuffer::FromString(std::string_view bytes) {
  std::shared_ptr<BodyBuffer> buffer = Allocate(bytes.size());
  if (buffer == nullptr) return nullptr;
  if (!bytes.empty()) std::memcpy(buffer->data_, bytes.data(), bytes.size());
  buffer->size_ = bytes.size();
  return buffer;
}

const std::shared_ptr<BodyBuffer>& BodyBuffer::Empty() {
  static const std::shared_ptr<BodyBuffer> empty = Allocate(0);
  return empty;
}

BodyBuffer::~BodyBuffer() { FreeBytes(data_); }

bool BodyBuffer::Grow(size_t capacity_bytes) {
  std::byte* grown = AllocateBytes(capacity_bytes);
  if (grown == nullptr) return false;
  if (size_ > 0) std::memcpy(grown, data_, size_);
  std::memset(grown + capacity_bytes, 0, kPaddingBytes);
  FreeBytes(data_);
  data_ = grown;
  capacity_ = capacity_bytes;
  return true;
}

bool BodyBuffer::Append(std::span<const std::byte> bytes, size_t max_capacity_bytes) {
  if (bytes.size() > max_capacity_bytes || size_ > max_capacity_bytes - bytes.size()) return false;
  const size_t needed = size_ + bytes.size();
  if (needed > capacity_) {
    // Double to keep chunked uploads linear, but never past the caller's limit.
    const size_t doubled = std::max({needed, capacity_ * 2, size_t{4096}});
    if (!Grow(std::min(doubled, max_capacity_bytes))) return false;
  }
  if (!bytes.empty()) std::memcpy(data_ + size_, bytes.data(), bytes.size());
  size_ += bytes.size();
  return true;
}

}  // namespace brigade::serve
