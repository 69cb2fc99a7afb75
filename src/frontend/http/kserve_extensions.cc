#include "frontend/http/kserve_extensions.h"

#include <vector>

#include "frontend/http/kserve_http_handler.h"
#include "protocol/http/shared_memory_json.h"
#include "protocol/http/trace_settings_json.h"

namespace brigade::frontend {

HttpResponse SharedMemoryAnswer(const KServeRoute& route, const HttpRequest& request,
                                SharedMemoryRegistry* registry) {
  if (registry == nullptr) return ErrorResponse(SharedMemoryDisabled());
  switch (route.endpoint) {
    case KServeEndpoint::kSharedMemoryStatus: {
      absl::StatusOr<std::vector<protocol::SharedMemoryRegion>> regions =
          registry->Status(route.model);
      if (!regions.ok()) return ErrorResponse(regions.status());
      return HttpResponse::Json(200, protocol::http::EncodeSharedMemoryStatus(*regions));
    }
    case KServeEndpoint::kSharedMemoryRegister: {
      absl::StatusOr<protocol::SharedMemoryRegion> region =
          protocol::http::DecodeSharedMemoryRegisterRequest(route.model, *request.body);
      if (!region.ok()) return ErrorResponse(region.status());
      const absl::Status status = registry->Register(*region);
      if (!status.ok()) return ErrorResponse(status);
      break;
    }
    default: {
      const absl::Status status = registry->Unregister(route.model);
      if (!status.ok()) return ErrorResponse(status);
      break;
    }
  }
  HttpResponse response;
  response.status = 200;
  return response;
}

HttpResponse TraceSettingAnswer(const KServeRoute& route, const HttpRequest& request,
                                InferenceServer* server) {
  absl::StatusOr<protocol::TraceSettings> settings;
  if (request.method == "POST") {
    absl::StatusOr<protocol::TraceSettingsUpdate> update =
        protocol::http::DecodeTraceSettingsRequest(*request.body);
    if (!update.ok()) return ErrorResponse(update.status());
    settings = server->UpdateTraceSettings(route.model, *update);
  } else {
    settings = server->TraceSettings(route.model);
  }
  if (!settings.ok()) return ErrorResponse(settings.status());
  return HttpResponse::Json(200, protocol::http::EncodeTraceSettings(*settings));
}

}  // namespace brigade::frontend
