#include "protocol/http/shared_memory_json.h"

#include <cstdint>
#include <optional>

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/http/json_reader.h"
#include "protocol/http/json_writer.h"

namespace brigade::protocol::http {
namespace {

using simdjson::ondemand::field;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

constexpr std::string_view kRegisterWhat = "shared memory register request";

absl::StatusOr<uint64_t> Unsigned(value& item, std::string_view key) {
  uint64_t out = 0;
  if (item.get_uint64().get(out) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(StrCat(
        kRegisterWhat, ": '", key, "' must be a non-negative integer, got ", TokenText(item)));
  }
  return out;
}

// The fields a register request and a status entry share: where the region lies.
void WriteRegionPlace(const protocol::SharedMemoryRegion& region, JsonWriter* writer) {
  writer->Key("key");
  writer->String(region.key);
  writer->Key("offset");
  writer->Uint(region.offset);
  writer->Key("byte_size");
  writer->Uint(region.byte_size);
}

}  // namespace

absl::StatusOr<protocol::SharedMemoryRegion> DecodeSharedMemoryRegisterRequest(
    std::string_view name, const BodyBuffer& body) {
  BRIGADE_RETURN_IF_ERROR(ValidateSharedMemoryName(name));
  protocol::SharedMemoryRegion region;
  region.name = std::string(name);
  JsonDocument document(body, body.size());
  BRIGADE_ASSIGN_OR_RETURN(object root, document.RootObject(kRegisterWhat));
  std::optional<uint64_t> byte_size;
  bool has_key = false;
  for (auto field_result : root) {
    field entry;
    if (auto error = std::move(field_result).get(entry)) return JsonError(kRegisterWhat, error);
    std::string_view key;
    if (auto error = entry.unescaped_key().get(key)) return JsonError(kRegisterWhat, error);
    if (key == "key") {
      BRIGADE_ASSIGN_OR_RETURN(std::string_view text, ReadString(entry.value(), [&] {
                                 return StrCat(kRegisterWhat, ": 'key'");
                               }));
      region.key = std::string(text);
      has_key = true;
    } else if (key == "offset") {
      BRIGADE_ASSIGN_OR_RETURN(region.offset, Unsigned(entry.value(), key));
    } else if (key == "byte_size") {
      BRIGADE_ASSIGN_OR_RETURN(byte_size, Unsigned(entry.value(), key));
    } else {
      return absl::InvalidArgumentError(StrCat(kRegisterWhat, " has an unknown field '", key, "'"));
    }
  }
  BRIGADE_RETURN_IF_ERROR(document.FinishDocument(kRegisterWhat));
  if (!has_key) return absl::InvalidArgumentError(StrCat(kRegisterWhat, " has no 'key'"));
  if (!byte_size) return absl::InvalidArgumentError(StrCat(kRegisterWhat, " has no 'byte_size'"));
  region.byte_size = *byte_size;
  BRIGADE_RETURN_IF_ERROR(ValidateSharedMemoryKey(region.key));
  return region;
}

std::string EncodeSharedMemoryRegisterRequest(const protocol::SharedMemoryRegion& region) {
  std::string json;
  JsonWriter writer(&json);
  writer.BeginObject();
  WriteRegionPlace(region, &writer);
  writer.EndObject();
  return json;
}

std::string EncodeSharedMemoryStatus(std::span<const protocol::SharedMemoryRegion> regions) {
  std::string json;
  JsonWriter writer(&json);
  writer.BeginArray();
  for (const protocol::SharedMemoryRegion& region : regions) {
    writer.BeginObject();
    writer.Key("name");
    writer.String(region.name);
    WriteRegionPlace(region, &writer);
    writer.EndObject();
  }
  writer.EndArray();
  return json;
}

}  // namespace brigade::protocol::http
