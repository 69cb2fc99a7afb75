#ifndef BRIGADE_PROTOCOL_GRPC_EXTENSION_MESSAGES_H_
#define BRIGADE_PROTOCOL_GRPC_EXTENSION_MESSAGES_H_

// The gRPC codec of Triton's system shared memory and trace extensions: pure functions between
// the messages (protocol/grpc_service.proto) and the protocol's plain types
// (protocol/shared_memory.h, protocol/trace_settings.h).
//
//   SystemSharedMemoryRegister  name, key, offset, byte_size → SharedMemoryRegion; the name and
//                               the key's form are checked here (INVALID_ARGUMENT naming them)
//   SystemSharedMemoryStatus    the regions → the response's map, keyed by name
//   TraceSetting                settings map → TraceSettingsUpdate (a SettingValue with no
//                               strings clears the setting), model_name as is; the settings
//                               answered → the response's map
//
// Thread safety: stateless; safe from any thread.

#include <span>

#include "absl/status/statusor.h"
#include "protocol/grpc_service.pb.h"
#include "protocol/shared_memory.h"
#include "protocol/trace_settings.h"

namespace brigade::protocol::grpc {

absl::StatusOr<protocol::SharedMemoryRegion> DecodeSystemSharedMemoryRegister(
    const inference::SystemSharedMemoryRegisterRequest& request);
void EncodeSystemSharedMemoryStatus(std::span<const protocol::SharedMemoryRegion> regions,
                                    inference::SystemSharedMemoryStatusResponse* out);

protocol::TraceSettingsUpdate DecodeTraceSettingRequest(
    const inference::TraceSettingRequest& request);
void EncodeTraceSettings(const protocol::TraceSettings& settings,
                         inference::TraceSettingResponse* out);

}  // namespace brigade::protocol::grpc

#endif  // BRIGADE_PROTOCOL_GRPC_EXTENSION_MESSAGES_H_
