#include "cache/byte_io.h"

#include <bit>
#include <variant>

namespace brigade::cache {
namespace {

enum ValueTag : uint8_t { kBool = 0, kInt64 = 1, kUint64 = 2, kDouble = 3, kString = 4 };

// Smallest encoded parameter entry: empty key (4) + tag (1) + a bool (1).
constexpr size_t kMinParamBytes = 6;

}  // namespace

void ByteWriter::U32(uint32_t value) {
  char bytes[4];
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  out_->append(bytes, 4);
}

void ByteWriter::U64(uint64_t value) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  out_->append(bytes, 8);
}

void ByteWriter::Str(std::string_view value) {
  U32(static_cast<uint32_t>(value.size()));
  out_->append(value);
}

void ByteWriter::Raw(std::span<const std::byte> bytes) {
  out_->append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void ByteWriter::Params(const Parameters& parameters) {
  U32(static_cast<uint32_t>(parameters.size()));
  for (const auto& [key, value] : parameters.entries()) {
    Str(key);
    Value(value);
  }
}

void ByteWriter::Value(const ParameterValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) {
    U8(kBool);
    U8(*b ? 1 : 0);
  } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
    U8(kInt64);
    I64(*i);
  } else if (const uint64_t* u = std::get_if<uint64_t>(&value)) {
    U8(kUint64);
    U64(*u);
  } else if (const double* d = std::get_if<double>(&value)) {
    U8(kDouble);
    U64(std::bit_cast<uint64_t>(*d));
  } else {
    U8(kString);
    Str(std::get<std::string>(value));
  }
}

bool ByteReader::U8(uint8_t* value) {
  if (remaining() < 1) return false;
  *value = static_cast<uint8_t>(in_[pos_++]);
  return true;
}

bool ByteReader::U32(uint32_t* value) {
  if (remaining() < 4) return false;
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(in_[pos_ + i])} << (8 * i);
  pos_ += 4;
  *value = v;
  return true;
}

bool ByteReader::U64(uint64_t* value) {
  if (remaining() < 8) return false;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(in_[pos_ + i])} << (8 * i);
  pos_ += 8;
  *value = v;
  return true;
}

bool ByteReader::I64(int64_t* value) {
  uint64_t v = 0;
  if (!U64(&v)) return false;
  *value = static_cast<int64_t>(v);
  return true;
}

bool ByteReader::Str(std::string_view* value) {
  uint32_t size = 0;
  return U32(&size) && Raw(size, value);
}

bool ByteReader::Raw(size_t size, std::string_view* value) {
  if (remaining() < size) return false;
  *value = in_.substr(pos_, size);
  pos_ += size;
  return true;
}

bool ByteReader::Params(Parameters* parameters) {
  uint32_t count = 0;
  if (!U32(&count) || count > remaining() / kMinParamBytes) return false;
  for (uint32_t i = 0; i < count; ++i) {
    std::string_view key;
    ParameterValue value;
    if (!Str(&key) || !Value(&value)) return false;
    parameters->Set(std::string(key), std::move(value));
  }
  return true;
}

bool ByteReader::Value(ParameterValue* value) {
  uint8_t tag = 0;
  if (!U8(&tag)) return false;
  switch (tag) {
    case kBool: {
      uint8_t b = 0;
      if (!U8(&b) || b > 1) return false;
      *value = b == 1;
      return true;
    }
    case kInt64: {
      int64_t i = 0;
      if (!I64(&i)) return false;
      *value = i;
      return true;
    }
    case kUint64: {
      uint64_t u = 0;
      if (!U64(&u)) return false;
      *value = u;
      return true;
    }
    case kDouble: {
      uint64_t bits = 0;
      if (!U64(&bits)) return false;
      *value = std::bit_cast<double>(bits);
      return true;
    }
    case kString: {
      std::string_view s;
      if (!Str(&s)) return false;
      *value = std::string(s);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace brigade::cache
