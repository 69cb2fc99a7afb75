#ifndef BRIGADE_CACHE_BYTE_IO_H_
#define BRIGADE_CACHE_BYTE_IO_H_

// ByteWriter / ByteReader: the little-endian, length-prefixed encoding shared by the cache key
// descriptor, the cached value format and the invalidation messages. Integers are fixed-width
// little-endian; strings are a u32 length followed by the bytes; parameters are a u32 count then,
// per entry, the key and a one-byte type tag with its value. Every variable-length field carries
// its length, so two different field sequences can never encode to the same bytes.
//
// ByteReader never reads past its input: each read checks the remaining length and returns false
// (leaving the output unspecified) on truncation, so decoders built on it reject corrupt input
// instead of crashing. Both classes are plain values without synchronization.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/parameters.h"

namespace brigade::cache {

class ByteWriter {
 public:
  explicit ByteWriter(std::string* out) : out_(out) {}

  void U8(uint8_t value) { out_->push_back(static_cast<char>(value)); }
  void U32(uint32_t value);
  void U64(uint64_t value);
  void I64(int64_t value) { U64(static_cast<uint64_t>(value)); }
  // u32 length + bytes.
  void Str(std::string_view value);
  void Raw(std::span<const std::byte> bytes);
  void Raw(std::string_view bytes) { out_->append(bytes); }
  // u32 count, then per entry: Str(key), U8(tag), value. Entries in the given order.
  void Params(const Parameters& parameters);
  // One tagged value (tags: 0 bool, 1 int64, 2 uint64, 3 double, 4 string).
  void Value(const ParameterValue& value);

  size_t size() const { return out_->size(); }

 private:
  std::string* out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  bool U8(uint8_t* value);
  bool U32(uint32_t* value);
  bool U64(uint64_t* value);
  bool I64(int64_t* value);
  // A string view into the input (valid while the input is).
  bool Str(std::string_view* value);
  bool Raw(size_t size, std::string_view* value);
  bool Params(Parameters* parameters);
  bool Value(ParameterValue* value);

  size_t remaining() const { return in_.size() - pos_; }
  size_t position() const { return pos_; }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_BYTE_IO_H_
