#ifndef BRIGADE_CORE_DATA_TYPE_H_
#define BRIGADE_CORE_DATA_TYPE_H_

// Element types of the KServe v2 / Open Inference Protocol, plus the helpers every layer needs
// to name, size and parse them.
//
// The protocol spells types as "FP32", Triton's config.pbtxt as "TYPE_FP32"; both spellings are
// parsed here so that the codec and the repository agree on one enum. BYTES is the only type
// without a fixed element size: its elements are serialized as a 4-byte little-endian length
// followed by the bytes, exactly as on the wire.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace brigade {

enum class DataType : uint8_t {
  kInvalid = 0,
  kBool,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFp16,
  kBf16,
  kFp32,
  kFp64,
  kBytes,
};

// Number of valid types, for tables indexed by DataType.
inline constexpr int kNumDataTypes = static_cast<int>(DataType::kBytes) + 1;

// Protocol name ("FP32"); "INVALID" for kInvalid.
std::string_view DataTypeName(DataType type);

// Triton config name ("TYPE_FP32"); "TYPE_INVALID" for kInvalid. BYTES is "TYPE_STRING".
std::string_view DataTypeConfigName(DataType type);

// Parses a protocol name ("FP32"). Case-sensitive, as the protocol is.
std::optional<DataType> ParseDataType(std::string_view name);

// Parses a Triton config name ("TYPE_FP32", "TYPE_STRING").
std::optional<DataType> ParseConfigDataType(std::string_view name);

// Size of one element in bytes; 0 for BYTES and kInvalid.
constexpr size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kBool:
    case DataType::kUint8:
    case DataType::kInt8:
      return 1;
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kFp16:
    case DataType::kBf16:
      return 2;
    case DataType::kUint32:
    case DataType::kInt32:
    case DataType::kFp32:
      return 4;
    case DataType::kUint64:
    case DataType::kInt64:
    case DataType::kFp64:
      return 8;
    case DataType::kBytes:
    case DataType::kInvalid:
      return 0;
  }
  return 0;
}

// Maps a C++ element type to its DataType, for typed accessors.
template <typename T>
struct DataTypeOf;
template <>
struct DataTypeOf<bool> {
  static constexpr DataType value = DataType::kBool;
};
template <>
struct DataTypeOf<uint8_t> {
  static constexpr DataType value = DataType::kUint8;
};
template <>
struct DataTypeOf<uint16_t> {
  static constexpr DataType value = DataType::kUint16;
};
template <>
struct DataTypeOf<uint32_t> {
  static constexpr DataType value = DataType::kUint32;
};
template <>
struct DataTypeOf<uint64_t> {
  static constexpr DataType value = DataType::kUint64;
};
template <>
struct DataTypeOf<int8_t> {
  static constexpr DataType value = DataType::kInt8;
};
template <>
struct DataTypeOf<int16_t> {
  static constexpr DataType value = DataType::kInt16;
};
template <>
struct DataTypeOf<int32_t> {
  static constexpr DataType value = DataType::kInt32;
};
template <>
struct DataTypeOf<int64_t> {
  static constexpr DataType value = DataType::kInt64;
};
template <>
struct DataTypeOf<float> {
  static constexpr DataType value = DataType::kFp32;
};
template <>
struct DataTypeOf<double> {
  static constexpr DataType value = DataType::kFp64;
};

}  // namespace brigade

#endif  // BRIGADE_CORE_DATA_TYPE_H_
