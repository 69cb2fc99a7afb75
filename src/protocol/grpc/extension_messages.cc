#include "protocol/grpc/extension_messages.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/status_macros.h"

namespace brigade::protocol::grpc {

absl::StatusOr<protocol::SharedMemoryRegion> DecodeSystemSharedMemoryRegister(
    const inference::SystemSharedMemoryRegisterRequest& request) {
  BRIGADE_RETURN_IF_ERROR(ValidateSharedMemoryName(request.name()));
  BRIGADE_RETURN_IF_ERROR(ValidateSharedMemoryKey(request.key()));
  return protocol::SharedMemoryRegion{request.name(), request.key(), request.offset(),
                                      request.byte_size()};
}

void EncodeSystemSharedMemoryStatus(std::span<const protocol::SharedMemoryRegion> regions,
                                    inference::SystemSharedMemoryStatusResponse* out) {
  for (const protocol::SharedMemoryRegion& region : regions) {
    inference::SystemSharedMemoryStatusResponse::RegionStatus& status =
        (*out->mutable_regions())[region.name];
    status.set_name(region.name);
    status.set_key(region.key);
    status.set_offset(region.offset);
    status.set_byte_size(region.byte_size);
  }
}

protocol::TraceSettingsUpdate DecodeTraceSettingRequest(
    const inference::TraceSettingRequest& request) {
  protocol::TraceSettingsUpdate update;
  for (const auto& [key, setting] : request.settings()) {
    protocol::TraceSettingChange change{key, std::nullopt};
    if (setting.value_size() > 0) {
      change.value = std::vector<std::string>(setting.value().begin(), setting.value().end());
    }
    update.push_back(std::move(change));
  }
  // The map's order is unspecified: apply in key order, so one request always means one thing.
  std::sort(update.begin(), update.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  return update;
}

void EncodeTraceSettings(const protocol::TraceSettings& settings,
                         inference::TraceSettingResponse* out) {
  for (const auto& [key, values] : settings) {
    inference::TraceSettingResponse::SettingValue& value = (*out->mutable_settings())[key];
    for (const std::string& one : values) value.add_value(one);
  }
}

}  // namespace brigade::protocol::grpc
