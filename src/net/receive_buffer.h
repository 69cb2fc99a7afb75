#ifndef BRIGADE_NET_RECEIVE_BUFFER_H_
#define BRIGADE_NET_RECEIVE_BUFFER_H_

// ReceiveBuffer: a growable byte buffer that a client receives one response into and reuses for
// the next, whose kPaddingBytes after size() are always allocated and zeroed, so simdjson can parse
// JSON in place (it reads ahead past the end of the text). It is held by std::shared_ptr because
// output tensors decoded from it are views that keep it alive (Tensor::View with the buffer as
// owner); the client reuses it only when it is the sole owner again.
//
// Thread safety: none (one writer, then readers). Growth copies the bytes already received; the
// allocation never shrinks, so a steady request mix stops allocating after the first responses.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace brigade::net {

class ReceiveBuffer {
 public:
  // Readable bytes after size(); at least simdjson's SIMDJSON_PADDING (checked where it is used).
  static constexpr size_t kPaddingBytes = 64;

  explicit ReceiveBuffer(size_t initial_capacity_bytes = size_t{64} * 1024) {
    Grow(initial_capacity_bytes);
  }
  ReceiveBuffer(const ReceiveBuffer&) = delete;
  ReceiveBuffer& operator=(const ReceiveBuffer&) = delete;

  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_.get(), size_}; }

  void Clear() { Truncate(0); }
  // Drops bytes past `size_bytes` (<= size()).
  void Truncate(size_t size_bytes) {
    size_ = size_bytes;
    ZeroPadding();
  }

  // Makes room for `additional_bytes` more, growing at least geometrically.
  void Reserve(size_t additional_bytes) {
    if (size_ + additional_bytes > capacity_) {
      Grow(std::max(size_ + additional_bytes, capacity_ * 2));
    }
  }
  char* write_ptr() { return data_.get() + size_; }
  size_t available() const { return capacity_ - size_; }
  void Commit(size_t n) {
    size_ += n;
    ZeroPadding();
  }

 private:
  void Grow(size_t capacity_bytes) {
    auto grown = std::make_unique_for_overwrite<char[]>(capacity_bytes + kPaddingBytes);
    if (size_ > 0) std::memcpy(grown.get(), data_.get(), size_);
    data_ = std::move(grown);
    capacity_ = capacity_bytes;
    ZeroPadding();
  }
  void ZeroPadding() { std::memset(data_.get() + size_, 0, kPaddingBytes); }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace brigade::net

#endif  // BRIGADE_NET_RECEIVE_BUFFER_H_
