#include "frontend/grpc/grpc_async_infer.h"

#include <atomic>
#include <optional>
#include <utility>

#include "core/check.h"
#include "frontend/grpc/grpc_infer_call.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/async_unary_call.h"

namespace brigade::frontend {
namespace {

using inference::ModelInferResponse;
using Poller = AsyncInferPollers::Poller;

// One ModelInfer call on a poller's queue, from the request for it to gRPC's last event and the
// request's completion, whichever comes later.
//
// gRPC's part (context, writer, response) lives in `grpc_` until both of its events for a started
// call came back: the done notification and the end of the one Finish (or, where no Finish was
// sent because the call was already cancelled, the claim that decided not to send it). Whoever
// claims `finished_` first (the request's completion on any thread, or a cancellation seen on the
// poller) finishes the call; the other leaves gRPC's part alone. The call object itself goes when
// gRPC's part is gone and the completion, if the request was handed on, has run.
class AsyncInferCall {
 public:
  enum class Event { kArrived, kDone, kFinished };

  struct Tag {
    AsyncInferCall* call;
    Event event;
  };

  explicit AsyncInferCall(Poller* poller)
      : poller_(poller),
        call_(poller->service->clock()),
        request_(std::make_shared<ChargedInferRequest>()),
        grpc_(std::make_unique<GrpcPart>()) {}

  // Asks gRPC for the next call on the poller's queue; ends this object when the queue is closing.
  void Request() {
    grpc_->context.AsyncNotifyWhenDone(&done_tag_);
    absl::MutexLock lock(&poller_->mu);
    if (poller_->closed) {
      delete this;  // never handed to gRPC
      return;
    }
    poller_->service->RequestModelInfer(&grpc_->context, &request_->message, &grpc_->writer,
                                        poller_->queue.get(), &arrived_tag_);
  }

  // On the poller's thread, one event at a time.
  void OnEvent(Event event, bool ok) {
    switch (event) {
      case Event::kArrived:
        OnArrived(ok);
        return;
      case Event::kDone:
        if (grpc_->context.IsCancelled()) {
          cancel_->Cancel();
          if (Claim()) {
            // The call is over: a Finish could only fail. Its event counts as back.
            call_.FinalStatus(absl::CancelledError("the call was cancelled"), &grpc_->context);
            GrpcEventBack();
          }
        }
        GrpcEventBack();
        return;
      case Event::kFinished:
        GrpcEventBack();
        return;
    }
  }

 private:
  struct GrpcPart {
    grpc::ServerContext context;
    grpc::ServerAsyncResponseWriter<ModelInferResponse> writer{&context};
    ModelInferResponse response;
  };

  void OnArrived(bool ok) {
    if (!ok) {  // the server shut down before a call came; gRPC holds nothing of it
      delete this;
      return;
    }
    (new AsyncInferCall(poller_))->Request();          // keep the queue's number of waiting calls
    grpc_events_.store(2, std::memory_order_relaxed);  // the done notification, the Finish's end
    GrpcInferenceService* service = poller_->service;
    std::shared_ptr<const Parameters> forwarded;
    if (std::optional<grpc::Status> refused = service->AdmitInfer(grpc_->context, &forwarded)) {
      // Refused before decoding, as the callback API's handler refuses: nothing is reported.
      if (Claim()) SendFinish(*refused);
      return;
    }
    absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
        call_.Decode(grpc_->context, std::move(request_), forwarded, service->server(),
                     service->options().shared_memory, service->options().charging, cancel_);
    if (!decoded.ok()) {
      if (Claim()) FinishWith(decoded.status());
      return;
    }
    refs_.fetch_add(1, std::memory_order_relaxed);  // the completion's
    (*decoded)->on_complete = [this](absl::StatusOr<InferResponse> result) {
      if (Claim()) FinishWith(call_.Encode(std::move(result), &grpc_->response));
      Unref();
    };
    service->server()->Infer(*std::move(decoded));
  }

  bool Claim() { return !finished_.exchange(true, std::memory_order_acq_rel); }

  // By the claimer, on any thread.
  void FinishWith(const absl::Status& status) {
    SendFinish(call_.FinalStatus(status, &grpc_->context));
  }

  void SendFinish(const grpc::Status& sent) {
    {
      // Under the poller's lock so no Finish reaches a queue Shutdown() closed (gRPC aborts on
      // that): a completion on an instance thread may come after the server shut down. Finish
      // only queues the write; the lock's other holders are the poller's requests for calls.
      absl::MutexLock lock(&poller_->mu);
      if (!poller_->closed) {
        if (sent.ok()) {
          grpc_->writer.Finish(grpc_->response, sent, &finished_tag_);
        } else {
          grpc_->writer.FinishWithError(sent, &finished_tag_);
        }
        return;
      }
    }
    // The queue is closing, so the server's shutdown already cancelled this call.
    GrpcEventBack();
  }

  // On the poller's thread, or the claimer's when its Finish was not sent.
  void GrpcEventBack() {
    const int left = grpc_events_.fetch_sub(1, std::memory_order_acq_rel) - 1;
    BRIGADE_CHECK(left >= 0, "a gRPC event came back that was not expected");
    if (left > 0) return;
    call_.Report(call_.clock()->NowNs());
    grpc_.reset();  // gRPC's call ends with its context, before a late completion comes
    Unref();
  }

  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  Poller* const poller_;
  Tag arrived_tag_{this, Event::kArrived};
  Tag done_tag_{this, Event::kDone};
  Tag finished_tag_{this, Event::kFinished};
  // Decode on the poller, then Encode/FinalStatus by the claimer, Report on the poller after the
  // Finish came back (gRPC's queue orders the claimer's writes before it).
  InferCallState call_;
  std::shared_ptr<ChargedInferRequest> request_;
  std::unique_ptr<GrpcPart> grpc_;
  std::atomic<int> grpc_events_{0};
  const std::shared_ptr<CancelFlag> cancel_ = std::make_shared<CancelFlag>();
  std::atomic<bool> finished_{false};
  // gRPC's part (dropped in GrpcEventBack), plus one while the request's completion is due.
  std::atomic<int> refs_{1};
};

void Poll(Poller* poller) {
  void* tag = nullptr;
  bool ok = false;
  while (poller->queue->Next(&tag, &ok)) {
    auto* event = static_cast<AsyncInferCall::Tag*>(tag);
    event->call->OnEvent(event->event, ok);
  }
}

}  // namespace

std::unique_ptr<AsyncInferPollers> AsyncInferPollers::Start(
    GrpcInferenceService* service, std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues,
    int calls_per_queue) {
  BRIGADE_CHECK(service->options().infer_api == GrpcInferApi::kCompletionQueue,
                "AsyncInferPollers need a service on the completion-queue API");
  BRIGADE_CHECK(calls_per_queue >= 1, "calls_per_queue must be at least 1");
  std::unique_ptr<AsyncInferPollers> out(new AsyncInferPollers());
  for (std::unique_ptr<grpc::ServerCompletionQueue>& queue : queues) {
    auto poller = std::make_unique<Poller>();
    poller->service = service;
    poller->queue = std::move(queue);
    for (int i = 0; i < calls_per_queue; ++i) (new AsyncInferCall(poller.get()))->Request();
    Poller* raw = poller.get();
    poller->thread = std::thread([raw] { Poll(raw); });
    out->pollers_.push_back(std::move(poller));
  }
  return out;
}

AsyncInferPollers::~AsyncInferPollers() { Shutdown(); }

void AsyncInferPollers::Shutdown() {
  absl::MutexLock serialize(&shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  for (const std::unique_ptr<Poller>& poller : pollers_) {
    {
      absl::MutexLock lock(&poller->mu);
      poller->closed = true;
    }
    poller->queue->Shutdown();
  }
  for (const std::unique_ptr<Poller>& poller : pollers_) poller->thread.join();
}

}  // namespace brigade::frontend
