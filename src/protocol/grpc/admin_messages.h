#ifndef BRIGADE_PROTOCOL_GRPC_ADMIN_MESSAGES_H_
#define BRIGADE_PROTOCOL_GRPC_ADMIN_MESSAGES_H_

// The gRPC codec for everything but inference: server and model metadata, the repository
// extension (index, load, unload) and statistics. Pure functions between the protocol's plain
// types (protocol/) and its messages, in both directions: the service encodes the responses and
// decodes the repository requests, the client decodes the responses; tests call them directly.
//
// Statistics keep Triton's field meaning one for one (protocol/statistics.h): durations are
// {count, ns}, last_inference is milliseconds since the Unix epoch, batch_stats lists only the
// batch sizes that ran. memory_usage and response_stats (decoupled models) stay empty.
//
// Failure: the decoders return INVALID_ARGUMENT naming the field or parameter at fault and
// UNIMPLEMENTED for the load request's `file:` overrides. Encoders, and the client's response
// decoders (every field of these messages is optional), cannot fail.
// Thread safety: stateless; safe from any thread.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/grpc_service.pb.h"
#include "protocol/log_settings.h"
#include "protocol/metadata.h"
#include "protocol/repository_index.h"
#include "protocol/statistics.h"

namespace brigade::protocol::grpc {

void EncodeServerMetadata(const protocol::ServerMetadata& metadata,
                          inference::ServerMetadataResponse* out);
void EncodeModelMetadata(const protocol::ModelMetadata& metadata,
                         inference::ModelMetadataResponse* out);
void EncodeRepositoryIndex(std::span<const protocol::RepositoryIndexEntry> entries,
                           inference::RepositoryIndexResponse* out);
void EncodeModelStatistics(std::span<const protocol::ModelStatistics> snapshots,
                           inference::ModelStatisticsResponse* out);

// Brigade serves one repository: a non-empty `repository_name` (index, load, unload) is
// UNIMPLEMENTED naming it, never read as the one repository.
absl::Status CheckRepositoryName(std::string_view repository_name);

// A load request: `model_name` and the optional `config` parameter (a model configuration as
// JSON text).
absl::StatusOr<protocol::LoadModelRequest> DecodeRepositoryModelLoad(
    const inference::RepositoryModelLoadRequest& request);

// The name of the model to unload. `unload_dependents: false` is accepted; `true` (unload an
// ensemble's models with it) is UNIMPLEMENTED: Brigade unloads exactly the model named.
absl::StatusOr<std::string> DecodeRepositoryModelUnload(
    const inference::RepositoryModelUnloadRequest& request);

// Triton's LogSettings RPC: the settings a request changes (the HTTP body's names and types:
// bool_param for log_info/log_warning/log_error, uint32_param for log_verbose_level,
// string_param for log_file/log_format; another type or an unknown name is INVALID_ARGUMENT
// naming it), and the settings answered.
absl::StatusOr<protocol::LogSettingsUpdate> DecodeLogSettingsRequest(
    const inference::LogSettingsRequest& request);
void EncodeLogSettings(const protocol::LogSettings& settings, inference::LogSettingsResponse* out);

// The client's side: the response messages as the protocol's plain types.
protocol::ServerMetadata DecodeServerMetadata(const inference::ServerMetadataResponse& message);
protocol::ModelMetadata DecodeModelMetadata(const inference::ModelMetadataResponse& message);
std::vector<protocol::ModelStatistics> DecodeModelStatistics(
    const inference::ModelStatisticsResponse& message);
std::vector<protocol::RepositoryIndexEntry> DecodeRepositoryIndex(
    const inference::RepositoryIndexResponse& message);

}  // namespace brigade::protocol::grpc

#endif  // BRIGADE_PROTOCOL_GRPC_ADMIN_MESSAGES_H_
