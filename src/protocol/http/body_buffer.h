#ifndef BRIGADE_PROTOCOL_HTTP_BODY_BUFFER_H_
#define BRIGADE_PROTOCOL_HTTP_BODY_BUFFER_H_

// BodyBuffer: the bytes of one HTTP request body, in one allocation followed by kPaddingBytes of
// zeroed slack.
//
// Why its own type: the transport reads a body straight into it (no std::string in between) and
// hands it over as std::shared_ptr; the codec then parses the JSON part in place (simdjson needs
// the slack after the last byte) and lets binary tensors borrow their bytes (Tensor::View with the
// buffer as owner), so a tensor sent with the binary extension is never copied on the server.
//
// Memory budget: a buffer may carry a charge against the process's in-flight budget
// (core/memory_budget.h) that covers its capacity; growing it grows the charge first, and the
// bytes go back when the buffer (with every tensor that borrows it) is gone.
//
// Thread safety: none; one writer (the transport) fills it before anyone else sees it, after
// which it is only read. Failure: Allocate returns null when memory is refused, by the allocator
// or by the budget (budget_refused() tells which for a growth).

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "core/memory_budget.h"

namespace brigade::protocol::http {

class BodyBuffer {
 public:
  // Zeroed bytes after size() that a reader may touch; at least simdjson's SIMDJSON_PADDING.
  static constexpr size_t kPaddingBytes = 64;

  // Alignment Allocate() can give one chosen byte of the body.
  static constexpr size_t kAlignment = 64;

  // Room for `capacity_bytes` of body (plus the padding); size() starts at 0. Null on failure.
  // The body is placed so that byte `aligned_offset` (e.g. where the binary tensors start, after
  // the JSON header) is kAlignment-aligned, so the tensors that borrow it are as well.
  static std::shared_ptr<BodyBuffer> Allocate(size_t capacity_bytes, size_t aligned_offset = 0);
  // The same, holding `charge` (taken by the caller, so it knows a refusal from the budget apart
  // from the allocator's). Growth beyond the charge's bytes grows the charge first.
  static std::shared_ptr<BodyBuffer> Allocate(size_t capacity_bytes, size_t aligned_offset,
                                              MemoryBudget::Charge charge);
  // A buffer holding a copy of `bytes` (tests, and bodies built in memory).
  static std::shared_ptr<BodyBuffer> FromString(std::string_view bytes, size_t aligned_offset = 0);
  // A shared empty body, for requests without one.
  static const std::shared_ptr<BodyBuffer>& Empty();

  // Use Allocate(); the key keeps construction inside this class while allowing make_shared.
  class Key {
    friend class BodyBuffer;
    Key() = default;
  };
  explicit BodyBuffer(Key) {}
  BodyBuffer(const BodyBuffer&) = delete;
  BodyBuffer& operator=(const BodyBuffer&) = delete;
  ~BodyBuffer();

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_), size_}; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }

  // Where the next bytes go and how many fit; the writer then calls Commit(n), which also zeroes
  // the kPaddingBytes after the new size().
  std::byte* write_ptr() { return data_ + size_; }
  size_t available() const { return capacity_ - size_; }
  void Commit(size_t n);

  // Makes room for `capacity_bytes` in all (nothing when there is already as much), moving the
  // bytes so far so that byte `aligned_offset` is kAlignment-aligned. False when memory is refused;
  // the buffer is then unchanged.
  bool Reserve(size_t capacity_bytes, size_t aligned_offset);

  // Appends `bytes`, growing (with a copy, which keeps no particular alignment) when needed up to
  // `max_capacity_bytes`. False when the result would exceed that limit or memory is refused;
  // then nothing is appended.
  bool Append(std::span<const std::byte> bytes, size_t max_capacity_bytes);

  // Whether the last growth that failed was refused by the memory budget (not the allocator).
  bool budget_refused() const { return budget_refused_; }
  // Bytes this buffer's charge covers: its capacity (counted, never refused, without a budget).
  size_t charged_bytes() const { return charge_.bytes(); }
  // The budget this buffer is charged to (for what is derived from it, such as its inflated
  // form); null without one.
  MemoryBudget* budget() const { return charge_.budget(); }

 private:
  bool Grow(size_t capacity_bytes, size_t aligned_offset);
  void ZeroPadding();

  std::byte* allocation_ = nullptr;  // what was allocated; data_ lies up to kAlignment - 1 after it
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  MemoryBudget::Charge charge_;  // covers capacity_ when it came from a budget
  bool budget_refused_ = false;
};

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_BODY_BUFFER_H_
