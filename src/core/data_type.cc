#include "core/data_type.h"

#include <array>

namespace brigade {
namespace {

struct Names {
  DataType type;
  std::string_view protocol;
  std::string_view config;
};

constexpr std::array<Names, kNumDataTypes> kNames = {{
    {DataType::kInvalid, "INVALID", "TYPE_INVALID"},
    {DataType::kBool, "BOOL", "TYPE_BOOL"},
    {DataType::kUint8, "UINT8", "TYPE_UINT8"},
    {DataType::kUint16, "UINT16", "TYPE_UINT16"},
    {DataType::kUint32, "UINT32", "TYPE_UINT32"},
    {DataType::kUint64, "UINT64", "TYPE_UINT64"},
    {DataType::kInt8, "INT8", "TYPE_INT8"},
    {DataType::kInt16, "INT16", "TYPE_INT16"},
    {DataType::kInt32, "INT32", "TYPE_INT32"},
    {DataType::kInt64, "INT64", "TYPE_INT64"},
    {DataType::kFp16, "FP16", "TYPE_FP16"},
    {DataType::kBf16, "BF16", "TYPE_BF16"},
    {DataType::kFp32, "FP32", "TYPE_FP32"},
    {DataType::kFp64, "FP64", "TYPE_FP64"},
    {DataType::kBytes, "BYTES", "TYPE_STRING"},
}};

}  // namespace

std::string_view DataTypeName(DataType type) {
  const auto index = static_cast<size_t>(type);
  return index < kNames.size() ? kNames[index].protocol : kNames[0].protocol;
}

std::string_view DataTypeConfigName(DataType type) {
  const auto index = static_cast<size_t>(type);
  return index < kNames.size() ? kNames[index].config : kNames[0].config;
}

std::optional<DataType> ParseDataType(std::string_view name) {
  for (size_t i = 1; i < kNames.size(); ++i) {
    if (kNames[i].protocol == name) return kNames[i].type;
  }
  return std::nullopt;
}

std::optional<DataType> ParseConfigDataType(std::string_view name) {
  for (size_t i = 1; i < kNames.size(); ++i) {
    if (kNames[i].config == name) return kNames[i].type;
  }
  return std::nullopt;
}

}  // namespace brigade
