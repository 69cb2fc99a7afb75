#ifndef BRIGADE_FRONTEND_GRPC_GRPC_STREAM_REACTOR_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_STREAM_REACTOR_H_

// ModelStreamInfer (Triton's bidirectional streaming inference) on gRPC's callback API.
//
// Each message read from the stream is one ModelInferRequest, decoded and run exactly like a
// unary ModelInfer (t0 stamped on read, raw inputs borrowed from the message, deadline the
// earliest of `timeout` and the stream's gRPC deadline). Responses are written as requests
// complete, so they may come back in a different order than sent; clients match them by `id`.
//
// Errors, as Triton reports them: by default a failed request is answered in the stream with
// `error_message` set and the stream goes on. When the client opened the stream with the header
// `triton_grpc_error: true`, the first error ends the stream with that gRPC status instead.
//
// Bounds: at most `max_in_flight` requests of one stream are inside the server at once; at the
// limit the reactor stops reading (HTTP/2 flow control then pushes back on the client) and
// resumes when one completes. At most one write is outstanding; completed responses wait in a
// queue that is bounded by the same limit.
//
// Lifetime: the reactor deletes itself when gRPC is done with it (OnDone) and no request of the
// stream is still inside the server. A cancelled stream sets the stream's CancelFlag, shared by
// all its requests, and finishes at once.
//
// Observability: each request is reported to the server's RequestObserver once its response was
// written (t5), or when it was dropped (the stream ended first), with the W3C trace context of
// the stream's `traceparent` / `tracestate` metadata as parent.
//
// Thread safety: reactions and completions run on arbitrary threads; state is guarded by `mu_`,
// and gRPC calls (StartRead, StartWrite, Finish) are made after releasing it.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "frontend/grpc/grpc_request_charge.h"
#include "frontend/request_report.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "protocol/grpc_service.pb.h"
#include "protocol/shared_memory.h"
#include "server/inference_server.h"
#include "telemetry/trace_context.h"

namespace brigade::frontend {

// Client metadata that turns stream errors into a final gRPC status.
inline constexpr char kStreamErrorAsStatusMetadata[] = "triton_grpc_error";

class StreamInferReactor final
    : public grpc::ServerBidiReactor<inference::ModelInferRequest,
                                     inference::ModelStreamInferResponse> {
 public:
  // Starts reading; returns the reactor for the method handler to return. `server`, `clock` and
  // `shared_memory` (system shared memory's regions; null: off) must outlive every call.
  // `max_in_flight` >= 1. `forwarded`: the parameters the stream's metadata forwards to each of
  // its requests (grpc_header_forwarding.h), or null.
  static StreamInferReactor* Start(grpc::CallbackServerContext* context, InferenceServer* server,
                                   const Clock* clock, int max_in_flight,
                                   std::shared_ptr<const Parameters> forwarded = nullptr,
                                   const protocol::SharedMemoryResolver* shared_memory = nullptr,
                                   RequestCharging charging = {});

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // What to do with gRPC once `mu_` is released.
  struct Actions {
    inference::ModelInferRequest* read = nullptr;
    const inference::ModelStreamInferResponse* write = nullptr;
    std::optional<absl::Status> finish;
    bool destroy = false;
  };

  StreamInferReactor(grpc::CallbackServerContext* context, InferenceServer* server,
                     const Clock* clock, int max_in_flight,
                     const protocol::SharedMemoryResolver* shared_memory);
  ~StreamInferReactor() override = default;

  // A response waiting to be written, with what the observer is told about its request.
  struct PendingWrite {
    std::unique_ptr<inference::ModelStreamInferResponse> message;
    RequestReport report;
  };

  void Submit(std::shared_ptr<ChargedInferRequest> read);
  void OnInferDone(PendingWrite write, const absl::Status& error);
  // Reports one request; call without holding `mu_`.
  void ReportDone(RequestReport& report, bool written);
  // Decides the next read, write, finish or deletion from the current state.
  Actions NextActions() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Perform(Actions actions);

  grpc::CallbackServerContext* const context_;
  InferenceServer* const server_;
  const protocol::SharedMemoryResolver* const shared_memory_;
  const Clock* const clock_;
  const int max_in_flight_;
  const bool errors_as_status_;
  const std::shared_ptr<CancelFlag> cancel_ = std::make_shared<CancelFlag>();
  std::shared_ptr<const Parameters> forwarded_;
  // Where each message is charged before it is decoded (full: that message is answered
  // UNAVAILABLE; the stream goes on).
  RequestCharging charging_;
  RequestObserver* const observer_;
  const std::optional<telemetry::TraceContext> parent_;

  absl::Mutex mu_;
  // The message the outstanding read fills; null when no read is outstanding.
  std::shared_ptr<ChargedInferRequest> reading_ ABSL_GUARDED_BY(mu_);
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  // Responses to write; the front one is being written when `writing_`.
  std::deque<PendingWrite> writes_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool writes_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  // The status the stream ends with once everything drains (the first error in error mode).
  std::optional<absl::Status> final_status_ ABSL_GUARDED_BY(mu_);
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_STREAM_REACTOR_H_
