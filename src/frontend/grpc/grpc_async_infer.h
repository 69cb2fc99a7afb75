#ifndef BRIGADE_FRONTEND_GRPC_GRPC_ASYNC_INFER_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_ASYNC_INFER_H_

// AsyncInferPollers: ModelInfer on gRPC's completion-queue API, served by threads Brigade owns
// (GrpcInferApi::kCompletionQueue).
//
// One thread per completion queue, each keeping `calls_per_queue` calls requested from gRPC so an
// arriving call finds one waiting. The thread that takes an arrival from its queue does
// everything the arrival needs: the admission checks, decoding (InferCallState), and
// InferenceServer::Infer, which may run the batch to completion right there and write the answer
// on the same thread. An answer completed elsewhere (an instance thread) starts its write from
// that thread; the write's end comes back on the call's queue. The behaviour seen by clients is
// the callback reactor's (grpc_infer_reactor.h): a cancelled call (client, deadline, shutdown)
// sets its request's CancelFlag and is answered CANCELLED at once; the request is reported to the
// server's RequestObserver once gRPC is through with the call.
//
// Lifetime: Start() once the grpc::Server is built; Shutdown() after grpc::Server::Shutdown
// returned (by then every call finished or was cancelled, and the pollers answered them), then
// destroy the pollers after the grpc::Server (gRPC wants its queues to outlive the server). A
// request whose completion comes after its call ended keeps only its own state until then,
// nothing of gRPC's.
//
// Thread safety: Shutdown() may be called from any thread but a poller's, more than once.
// Failure: none at run time; a queue that gRPC closed ends its thread.

#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "frontend/grpc/grpc_inference_service.h"
#include "grpcpp/completion_queue.h"

namespace brigade::frontend {

class AsyncInferPollers {
 public:
  // `service` (infer_api kCompletionQueue, registered with the server that made `queues`) is
  // borrowed and must outlive the pollers. `queues`: one per thread, from
  // ServerBuilder::AddCompletionQueue. `calls_per_queue` >= 1.
  static std::unique_ptr<AsyncInferPollers> Start(
      GrpcInferenceService* service,
      std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues, int calls_per_queue);
  ~AsyncInferPollers();

  AsyncInferPollers(const AsyncInferPollers&) = delete;
  AsyncInferPollers& operator=(const AsyncInferPollers&) = delete;

  // Closes the queues, lets each thread drain its own and joins them.
  void Shutdown();

  // One queue, its thread, and the lock that keeps a new call request off a queue being closed
  // (gRPC forbids requesting on a shut-down queue). Public for the calls in the .cc file.
  struct Poller {
    GrpcInferenceService* service = nullptr;
    std::unique_ptr<grpc::ServerCompletionQueue> queue;
    absl::Mutex mu;
    bool closed ABSL_GUARDED_BY(mu) = false;
    std::thread thread;
  };

 private:
  AsyncInferPollers() = default;

  std::vector<std::unique_ptr<Poller>> pollers_;
  absl::Mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_ASYNC_INFER_H_
