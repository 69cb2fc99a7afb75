#include "serve/grpc/grpc_stream_reactor.h"

#include <string>
#include <utility>

#include "serve/grpc/grpc_infer_codec.h"
#include "serve/grpc/grpc_status.h"

namespace brigade::serve {
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
                                              int max_in_flight) {
  // gRPC's callback API owns reactors through raw pointers; this one deletes itself once both
  // gRPC and the server are done with it (see Perform).
  auto* reactor = new StreamInferReactor(context, server, clock, max_in_flight);
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
                                       int max_in_flight)
    : context_(context),
      server_(server),
      clock_(clock),
      max_in_flight_(max_in_flight < 1 ? 1 : max_in_flight),
      errors_as_status_(WantsErrorsAsStatus(context)) {}

void StreamInferReactor::OnReadDone(bool ok) {
  std::shared_ptr<ModelInferRequest> message;
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

void StreamInferReactor::Submit(std::shared_ptr<const ModelInferRequest> message) {
  const int64_t arrival_ns = clock_->NowNs();
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
      DecodeModelInferRequest(message, arrival_ns);
  if (!decoded.ok()) {
    OnInferDone(ErrorResponse(*message, decoded.status()), decoded.status());
    return;
  }
  std::unique_ptr<InferRequest> request = *std::move(decoded);
  request->cancel = cancel_;
  request->deadline = Deadline::Earliest(
      request->deadline,
      FromGrpcDeadline(context_->deadline(), std::chrono::system_clock::now(), arrival_ns));
  request->on_complete = [this, message](absl::StatusOr<InferResponse> result) {
    auto response = std::make_unique<ModelStreamInferResponse>();
    absl::Status status = result.status();
    if (result.ok()) status = EncodeModelInferResponse(*result, response->mutable_infer_response());
    if (!status.ok()) response = ErrorResponse(*message, status);
    OnInferDone(std::move(response), status);
  };
  server_->Infer(std::move(request));
}

void StreamInferReactor::OnInferDone(std::unique_ptr<ModelStreamInferResponse> response,
                                     const absl::Status& error) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    --in_flight_;
    const bool ending = finish_called_ || cancelled_ || writes_failed_;
    if (!error.ok() && errors_as_status_) {
      if (!final_status_.has_value()) final_status_ = error;
    } else if (!ending) {
      writes_.push_back(std::move(response));
    }
    actions = NextActions();
  }
  Perform(std::move(actions));
}

void StreamInferReactor::OnWriteDone(bool ok) {
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!writes_.empty()) writes_.pop_front();
    if (!ok) {
      writes_failed_ = true;
      writes_.clear();
    }
    actions = NextActions();
  }
  Perform(std::move(actions));
}

void StreamInferReactor::OnCancel() {
  cancel_->Cancel();
  Actions actions;
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    writes_.clear();
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
    reading_ = std::make_shared<ModelInferRequest>();
    actions.read = reading_.get();
  }
  if (!writing_ && !writes_.empty()) {
    writing_ = true;
    actions.write = writes_.front().get();
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

}  // namespace brigade::serve
