#include "frontend/grpc/grpc_stream_reactor.h"

#include <string>
#include <utility>

#include "frontend/grpc/grpc_status.h"
#include "frontend/grpc/grpc_trace_context.h"
#include "protocol/grpc/infer_messages.h"
#include "protocol/header_forwarding.h"

namespace brigade::frontend {
namespace {

using inference::ModelInferRequest;
using inference::ModelStreamInferResponse;

bool WantsErrorsAsStatus(const grpc::CallbackServerContext* context) {
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(kStreamErrorAsStatusMetadata);
  return it != metadata.end() && it->second == "true";
}

// The in-stream answer to a failed request: the error, and enough of the request for the
// client to match it (Triton fills the same fields).
std::unique_ptr<ModelStreamInferResponse> ErrorResponse(const ModelInferRequest& request,
                                                        const absl::Status& status) {
  auto response = std::make_unique<ModelStreamInferResponse>();
  response->set_error_message(std::string(status.message()));
  inference::ModelInferResponse* infer = response->mutable_infer_response();
  infer->set_model_name(request.model_name());
  infer->set_model_version(request.model_version());
  infer->set_id(request.id());
  return response;
}

}  // namespace

StreamInferReactor* StreamInferReactor::Start(grpc::CallbackServerContext* context,
                                              InferenceServer* server, const Clock* clock,
                                              int max_in_flight,
                                              std::shared_ptr<const Parameters> forwarded,
                                              const protocol::SharedMemoryResolver* shared_memory,
                                              RequestCharging charging) {
  // gRPC's callback API owns reactors through raw pointers; this one deletes itself once both
  // gRPC and the server are done with it (see Perform).
  auto* reactor = new StreamInferReactor(context, server, clock, max_in_flight, shared_memory);
  reactor->forwarded_ = std::move(forwarded);
  reactor->charging_ = charging;
  Actions actions;
  {
    absl::MutexLock lock(&reactor->mu_);
    actions = reactor->NextActions();
  }
  reactor->Perform(std::move(actions));
  return reactor;
}

StreamInferReactor::StreamInferReactor(grpc::CallbackServerContext* context,
                                       InferenceServer* server, const Clock* clock,
                                       int max_in_flight,
                                       const protocol::SharedMemoryResolver* shared_memory)
    : context_(context),
      server_(server),
      shared_memory_(shared_memory),
      clock_(clock),
      max_in_flight_(max_in_flight < 1 ? 1 : max_in_flight),
      errors_as_status_(WantsErrorsAsStatus(context)),
      observer_(server->observer()),
      parent_(TraceContextFromMetadata(*context)) {}

void StreamInferReactor::OnReadDone(bool ok) {
  std::shared_ptr<ChargedInferRequest> message;
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    message = std::move(reading_);
    if (!ok) {
      reads_done_ = true;  // the client half-closed, or the stream broke
      message = nullptr;
    } else if (!finish_called_ && !cancelled_ && !final_status_.has_value() && !writes_failed_) {
      ++in_flight_;  // before Submit: its completion may run before Submit returns
    } else {
      message = nullptr;  // the stream is ending; the request is dropped unanswered
    }
    if (message == nullptr) actions = NextActions();
  }
  if (message != nullptr) {
    Submit(std::move(message));
    absl::MutexLock lock(&mu_);
    actions = NextActions();
  }
  Perform(std::move(actions));
}

void StreamInferReactor::Submit(std::shared_ptr<ChargedInferRequest> read) {
  const int64_t arrival_ns = clock_->NowNs();
  const absl::Status charged = ChargeRequest(charging_, read.get());
  const std::shared_ptr<const ModelInferRequest> message = SharedMessage(std::move(read));
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
      charged.ok() ? protocol::grpc::DecodeModelInferRequest(message, arrival_ns, shared_memory_)
                   : absl::StatusOr<std::unique_ptr<InferRequest>>(charged);
  // Outputs placed in shared memory, held mapped until the answer is written there.
  auto shared_outputs = std::make_shared<std::vector<protocol::SharedMemoryOutput>>();
  if (decoded.ok()) {
    absl::StatusOr<std::vector<protocol::SharedMemoryOutput>> bound =
        protocol::BindSharedMemoryOutputs(shared_memory_, &(*decoded)->outputs);
    if (bound.ok()) {
      *shared_outputs = *std::move(bound);
    } else {
      decoded = bound.status();
    }
  }
  const int64_t decoded_ns = clock_->NowNs();
  if (!decoded.ok()) {
    PendingWrite write{ErrorResponse(*message, decoded.status()), {}};
    write.report.model = message->model_name();
    write.report.version = message->model_version();
    write.report.id = message->id();
    write.report.status = decoded.status();
    write.report.clock.Mark(Stage::kArrival, arrival_ns);
    write.report.clock.Mark(Stage::kDecoded, decoded_ns);
    OnInferDone(std::move(write), decoded.status());
    return;
  }
  std::unique_ptr<InferRequest> request = *std::move(decoded);
  if (forwarded_ != nullptr) protocol::HeaderForwarding::Merge(*forwarded_, &request->parameters);
  request->protocol = Protocol::kGrpc;
  request->clock.Mark(Stage::kDecoded, decoded_ns);
  request->cancel = cancel_;
  request->deadline = Deadline::Earliest(
      request->deadline,
      FromGrpcDeadline(context_->deadline(), std::chrono::system_clock::now(), arrival_ns));
  request->on_complete = [this, message, arrival_ns, decoded_ns,
                          shared_outputs](absl::StatusOr<InferResponse> result) {
    PendingWrite write{std::make_unique<ModelStreamInferResponse>(), {}};
    RequestReport& report = write.report;
    report.model = message->model_name();
    report.version = message->model_version();
    report.id = message->id();
    report.status = result.status();
    if (result.ok()) {
      report.TakeResponse(*result);
      report.status = protocol::WriteSharedMemoryOutputs(*shared_outputs, *result);
      if (report.status.ok()) {
        report.status = protocol::grpc::EncodeModelInferResponse(
            *result, write.message->mutable_infer_response(), *shared_outputs);
      }
    } else {
      report.clock.Mark(Stage::kArrival, arrival_ns);
      report.clock.Mark(Stage::kDecoded, decoded_ns);
    }
    if (!report.status.ok()) write.message = ErrorResponse(*message, report.status);
    const absl::Status status = report.status;
    OnInferDone(std::move(write), status);
  };
  server_->Infer(std::move(request));
}

void StreamInferReactor::OnInferDone(PendingWrite write, const absl::Status& error) {
  Actions actions;
  bool queued = false;
  {
    absl::MutexLock lock(&mu_);
    const bool ending = finish_called_ || cancelled_ || writes_failed_;
    if (!error.ok() && errors_as_status_) {
      if (!final_status_.has_value()) final_status_ = error;
    } else if (!ending) {
      writes_.push_back(std::move(write));
      queued = true;
    }
    // Still counted in flight while reporting below, so the reactor cannot be deleted under it.
    if (queued) {
      --in_flight_;
      actions = NextActions();
    }
  }
  if (!queued) {
    // Ends the stream with this error, or the stream is ending: the answer is never written.
    ReportDone(write.report, /*written=*/false);
    absl::MutexLock lock(&mu_);
    --in_flight_;
    actions = NextActions();
  }
  Perform(std::move(actions));
}

void StreamInferReactor::ReportDone(RequestReport& report, bool written) {
  ReportRequestDone(observer_, &report,
                    {.protocol = Protocol::kGrpc,
                     .protocol_code = std::nullopt,  // a stream has no per-request status
                     .written = written,
                     .sent_ns = written ? clock_->NowNs() : 0,
                     .parent = &parent_,
                     .unwritten_code = absl::StatusCode::kCancelled,
                     .unwritten_message = "the stream ended before the answer was written"});
}

void StreamInferReactor::OnWriteDone(bool ok) {
  Actions actions;
  std::deque<PendingWrite> finished;  // reported once the lock is released
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!writes_.empty()) {
      finished.push_back(std::move(writes_.front()));
      writes_.pop_front();
    }
    if (!ok) {
      writes_failed_ = true;
      for (PendingWrite& dropped : writes_) finished.push_back(std::move(dropped));
      writes_.clear();
    }
    // The reports below read members: hold the reactor as if a request were in flight.
    ++in_flight_;
  }
  for (size_t i = 0; i < finished.size(); ++i) ReportDone(finished[i].report, ok && i == 0);
  {
    absl::MutexLock lock(&mu_);
    --in_flight_;
    actions = NextActions();
  }
  Perform(std::move(actions));
}

void StreamInferReactor::OnCancel() {
  cancel_->Cancel();
  Actions actions;
  std::deque<PendingWrite> dropped;
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    // The one being written (if any) stays until OnWriteDone; the rest are never written.
    while (writes_.size() > (writing_ ? 1u : 0u)) {
      dropped.push_back(std::move(writes_.back()));
      writes_.pop_back();
    }
    ++in_flight_;
  }
  for (PendingWrite& write : dropped) ReportDone(write.report, /*written=*/false);
  {
    absl::MutexLock lock(&mu_);
    --in_flight_;
    actions = NextActions();
  }
  Perform(std::move(actions));
}

void StreamInferReactor::OnDone() {
  bool destroy = false;
  {
    absl::MutexLock lock(&mu_);
    done_ = true;
    destroy = in_flight_ == 0;
  }
  if (destroy) delete this;
}

StreamInferReactor::Actions StreamInferReactor::NextActions() {
  Actions actions;
  if (done_) {
    // gRPC is through with the stream; the last request to come back deletes the reactor.
    actions.destroy = in_flight_ == 0;
    return actions;
  }
  if (finish_called_) return actions;
  const bool stopping = cancelled_ || writes_failed_ || final_status_.has_value();
  const int queued = in_flight_ + static_cast<int>(writes_.size());
  if (!stopping && !reads_done_ && reading_ == nullptr && queued < max_in_flight_) {
    reading_ = std::make_shared<ChargedInferRequest>();
    actions.read = &reading_->message;
  }
  if (!writing_ && !writes_.empty()) {
    writing_ = true;
    actions.write = writes_.front().message.get();
    return actions;
  }
  if (writing_) return actions;  // never finish with a write outstanding
  if (cancelled_) {
    finish_called_ = true;
    actions.finish = absl::CancelledError("the stream was cancelled");
  } else if (in_flight_ == 0 && writes_.empty() && (reads_done_ || stopping)) {
    finish_called_ = true;
    if (final_status_.has_value()) {
      actions.finish = *final_status_;
    } else if (writes_failed_) {
      actions.finish = absl::UnavailableError("writing to the stream failed");
    } else {
      actions.finish = absl::OkStatus();
    }
  }
  return actions;
}

void StreamInferReactor::Perform(Actions actions) {
  if (actions.read != nullptr) StartRead(actions.read);
  if (actions.write != nullptr) StartWrite(actions.write);
  if (actions.finish.has_value()) {
    // After Finish gRPC may call OnDone (and delete this) on another thread: nothing below may
    // touch members.
    Finish(FinishStatus(*actions.finish, context_));
  }
  if (actions.destroy) delete this;
}

}  // namespace brigade::frontend
