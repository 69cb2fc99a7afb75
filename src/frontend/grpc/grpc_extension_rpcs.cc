// GrpcInferenceService's RPCs of Triton's trace and system shared memory extensions (declared in
// grpc_inference_service.h), in their own file so the service's file keeps to the core RPCs.

#include <vector>

#include "frontend/grpc/grpc_access.h"
#include "frontend/grpc/grpc_inference_service.h"
#include "frontend/grpc/grpc_status.h"
#include "protocol/grpc/extension_messages.h"

namespace brigade::frontend {
namespace {

absl::Status NoCudaSharedMemory() {
  return absl::UnimplementedError(
      "CUDA shared memory is not supported on this server (it runs models on CPUs); use system "
      "shared memory (SystemSharedMemoryRegister)");
}

}  // namespace

grpc::ServerUnaryReactor* GrpcInferenceService::TraceSetting(
    grpc::CallbackServerContext* context, const inference::TraceSettingRequest* request,
    inference::TraceSettingResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kTraceSettings)) {
    return FinishRefused(context, *refused);
  }
  const protocol::TraceSettingsUpdate update = protocol::grpc::DecodeTraceSettingRequest(*request);
  absl::StatusOr<protocol::TraceSettings> settings =
      update.empty() ? server_->TraceSettings(request->model_name())
                     : server_->UpdateTraceSettings(request->model_name(), update);
  if (!settings.ok()) return FinishUnary(context, settings.status());
  protocol::grpc::EncodeTraceSettings(*settings, response);
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::SystemSharedMemoryStatus(
    grpc::CallbackServerContext* context, const inference::SystemSharedMemoryStatusRequest* request,
    inference::SystemSharedMemoryStatusResponse* response) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kSharedMemoryStatus)) {
    return FinishRefused(context, *refused);
  }
  if (options_.shared_memory == nullptr) return FinishUnary(context, SharedMemoryDisabled());
  absl::StatusOr<std::vector<protocol::SharedMemoryRegion>> regions =
      options_.shared_memory->Status(request->name());
  if (!regions.ok()) return FinishUnary(context, regions.status());
  protocol::grpc::EncodeSystemSharedMemoryStatus(*regions, response);
  return FinishUnary(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcInferenceService::SystemSharedMemoryRegister(
    grpc::CallbackServerContext* context,
    const inference::SystemSharedMemoryRegisterRequest* request,
    inference::SystemSharedMemoryRegisterResponse* /*response*/) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kSharedMemoryRegister)) {
    return FinishRefused(context, *refused);
  }
  if (options_.shared_memory == nullptr) return FinishUnary(context, SharedMemoryDisabled());
  absl::StatusOr<protocol::SharedMemoryRegion> region =
      protocol::grpc::DecodeSystemSharedMemoryRegister(*request);
  if (!region.ok()) return FinishUnary(context, region.status());
  return FinishUnary(context, options_.shared_memory->Register(*region));
}

grpc::ServerUnaryReactor* GrpcInferenceService::SystemSharedMemoryUnregister(
    grpc::CallbackServerContext* context,
    const inference::SystemSharedMemoryUnregisterRequest* request,
    inference::SystemSharedMemoryUnregisterResponse* /*response*/) {
  if (std::optional<grpc::Status> refused =
          RefuseGrpc(options_.access_gate, *context, auth::Operation::kSharedMemoryRegister)) {
    return FinishRefused(context, *refused);
  }
  if (options_.shared_memory == nullptr) return FinishUnary(context, SharedMemoryDisabled());
  return FinishUnary(context, options_.shared_memory->Unregister(request->name()));
}

grpc::ServerUnaryReactor* GrpcInferenceService::CudaSharedMemoryStatus(
    grpc::CallbackServerContext* context,
    const inference::CudaSharedMemoryStatusRequest* /*request*/,
    inference::CudaSharedMemoryStatusResponse* /*response*/) {
  return FinishUnary(context, NoCudaSharedMemory());
}

grpc::ServerUnaryReactor* GrpcInferenceService::CudaSharedMemoryRegister(
    grpc::CallbackServerContext* context,
    const inference::CudaSharedMemoryRegisterRequest* /*request*/,
    inference::CudaSharedMemoryRegisterResponse* /*response*/) {
  return FinishUnary(context, NoCudaSharedMemory());
}

grpc::ServerUnaryReactor* GrpcInferenceService::CudaSharedMemoryUnregister(
    grpc::CallbackServerContext* context,
    const inference::CudaSharedMemoryUnregisterRequest* /*request*/,
    inference::CudaSharedMemoryUnregisterResponse* /*response*/) {
  return FinishUnary(context, NoCudaSharedMemory());
}

}  // namespace brigade::frontend
