#ifndef BRIGADE_FRONTEND_GRPC_GRPC_TRACE_CONTEXT_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_TRACE_CONTEXT_H_

// The W3C trace context a gRPC call carries in its metadata (`traceparent`, `tracestate`, as
// OpenTelemetry's gRPC propagators send them), for unary calls on any gRPC API and for streams
// alike. An absent or malformed `traceparent` yields nullopt (the server starts a new
// trace); see telemetry/trace_context.h for the parsing rules.
//
// Stateless; reads the context's client metadata, which gRPC fixes before the call starts.

#include <optional>

#include "grpcpp/server_context.h"
#include "telemetry/trace_context.h"

namespace brigade::frontend {

std::optional<telemetry::TraceContext> TraceContextFromMetadata(
    const grpc::ServerContextBase& context);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_TRACE_CONTEXT_H_
