#include "protocol/http/body_buffer.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

namespace brigade::protocol::http {
namespace {

// Plain allocation plus up to kAlignment - 1 bytes of slack to place the body by hand: glibc's
// over-aligned allocation costs about a thousand instructions more per request.
std::byte* AllocateBytes(size_t capacity_bytes) {
  return static_cast<std::byte*>(::operator new(
      capacity_bytes + BodyBuffer::kPaddingBytes + BodyBuffer::kAlignment - 1, std::nothrow));
}

void FreeBytes(std::byte* data) {
  if (data != nullptr) ::operator delete(data);
}

}  // namespace

std::shared_ptr<BodyBuffer> BodyBuffer::Allocate(size_t capacity_bytes, size_t aligned_offset) {
  auto buffer = std::make_shared<BodyBuffer>(Key());
  if (!buffer->Grow(capacity_bytes, aligned_offset)) return nullptr;
  return buffer;
}

std::shared_ptr<BodyBuffer> BodyBuffer::Allocate(size_t capacity_bytes, size_t aligned_offset,
                                                 MemoryBudget::Charge charge) {
  auto buffer = std::make_shared<BodyBuffer>(Key());
  buffer->charge_ = std::move(charge);
  if (!buffer->Grow(capacity_bytes, aligned_offset)) return nullptr;
  return buffer;
}

std::shared_ptr<BodyBuffer> BodyBuffer::FromString(std::string_view bytes, size_t aligned_offset) {
  std::shared_ptr<BodyBuffer> buffer = Allocate(bytes.size(), aligned_offset);
  if (buffer == nullptr) return nullptr;
  if (!bytes.empty()) std::memcpy(buffer->data_, bytes.data(), bytes.size());
  buffer->size_ = bytes.size();
  return buffer;
}

const std::shared_ptr<BodyBuffer>& BodyBuffer::Empty() {
  static const std::shared_ptr<BodyBuffer> empty = Allocate(0);
  return empty;
}

BodyBuffer::~BodyBuffer() { FreeBytes(allocation_); }

bool BodyBuffer::Grow(size_t capacity_bytes, size_t aligned_offset) {
  // Charged before allocating, so the budget bounds what is asked of the allocator. A budgeted
  // charge never shrinks: the old allocation is held until the new one is in place.
  const size_t uncharged = capacity_bytes > charge_.bytes() ? capacity_bytes - charge_.bytes() : 0;
  if (!charge_.Grow(uncharged)) {
    budget_refused_ = true;
    return false;
  }
  budget_refused_ = false;
  std::byte* allocation = AllocateBytes(capacity_bytes);
  if (allocation == nullptr) return false;
  const uintptr_t target = reinterpret_cast<uintptr_t>(allocation) + aligned_offset;
  std::byte* data = allocation + (kAlignment - target % kAlignment) % kAlignment;
  if (size_ > 0) std::memcpy(data, data_, size_);
  std::memset(data + capacity_bytes, 0, kPaddingBytes);
  FreeBytes(allocation_);
  allocation_ = allocation;
  data_ = data;
  capacity_ = capacity_bytes;
  return true;
}

bool BodyBuffer::Reserve(size_t capacity_bytes, size_t aligned_offset) {
  return capacity_bytes <= capacity_ || Grow(capacity_bytes, aligned_offset);
}

bool BodyBuffer::Append(std::span<const std::byte> bytes, size_t max_capacity_bytes) {
  if (bytes.size() > max_capacity_bytes || size_ > max_capacity_bytes - bytes.size()) return false;
  const size_t needed = size_ + bytes.size();
  if (needed > capacity_) {
    // Double to keep chunked uploads linear, but never past the caller's limit.
    const size_t doubled = std::max({needed, capacity_ * 2, size_t{4096}});
    if (!Grow(std::min(doubled, max_capacity_bytes), 0)) return false;
  }
  if (!bytes.empty()) std::memcpy(data_ + size_, bytes.data(), bytes.size());
  size_ += bytes.size();
  ZeroPadding();
  return true;
}

void BodyBuffer::Commit(size_t n) {
  size_ += n;
  ZeroPadding();
}

// The spare capacity after size() holds whatever the allocation or an earlier read left there;
// the JSON parser reads the padding after the body and must find zeros, not a stray ',' or '"'.
void BodyBuffer::ZeroPadding() { std::memset(data_ + size_, 0, kPaddingBytes); }

}  // namespace brigade::protocol::http
