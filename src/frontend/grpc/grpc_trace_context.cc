#include "frontend/grpc/grpc_trace_context.h"

#include <string_view>

namespace brigade::frontend {
namespace {

std::optional<std::string_view> Metadata(const grpc::ServerContextBase& context,
                                         std::string_view key) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(grpc::string_ref(key.data(), key.size()));
  if (it == metadata.end()) return std::nullopt;
  return std::string_view(it->second.data(), it->second.size());
}

}  // namespace

std::optional<telemetry::TraceContext> TraceContextFromMetadata(
    const grpc::ServerContextBase& context) {
  return telemetry::ExtractTraceContext(Metadata(context, "traceparent"),
                                        Metadata(context, "tracestate"));
}

}  // namespace brigade::frontend
