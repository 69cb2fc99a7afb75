#ifndef BRIGADE_PIPELINE_REQUEST_PIPELINE_H_
#define BRIGADE_PIPELINE_REQUEST_PIPELINE_H_

// RequestPipeline: the path of one inference request through the server, as named stages in the
// order the request travels. This file is the one place that order is written down.
//
//   stage         owner                          stamps      what it does
//   ------------  -----------------------------  ----------  ------------------------------------
//   admit         Admission (admission.h)        t0          refuses while draining; counts the
//                                                            request in flight until step 10 ends
//   route         Router (router.h)                          picks the served model and version
//   preprocess    PrepareRequest                 t1          validates and orders the inputs for
//                 (request_validator.h), then               the version's signature; a model's
//                 the preprocess pool                        attached preprocess step turns
//                                                            them into the model's inputs, on
//                                                            a bounded pool (never on an io
//                                                            thread)
//   cache lookup  the model's ResponseCache                  a hit is answered here (step 8);
//                 (cache/response_cache.h)                   identical misses join one leader
//   enqueue       the version's Scheduler        queue in    bounded queues, priorities,
//                 (scheduler/scheduler.h)                    deadlines, admission by SLO; an
//                 or its Ensemble                            ensemble instead sends each of its
//                 (route/ensemble.h)                         steps through this pipeline from
//                                                            "route" on (as RunStep), so every
//                                                            step is validated, cached and
//                                                            queued on its own model
//   execute       an instance thread             queue out,  a batch of requests runs on the
//                                                t2, t3      backend
//   postprocess   the scheduler's batch runner,  t4          each request's rows are sliced out
//                 then Answer()                              of the batch; a model's attached
//                                                            postprocess step turns its outputs
//                                                            into the clients' (t4 re-stamped)
//   respond       Answer() below                             statistics are recorded, outputs
//                 (classification.h)                         asked with `classification` become
//                                                            top-k strings, then the front end's
//                                                            callback gets the answer
//   cache store,  the after-answer worker                    a successful miss is stored and its
//   followers     (a bounded BlockingWorker)                 followers get the same answer (or run
//                                                            again); then the request leaves
//   report        the front end, at t5           t5          metrics, trace and access log of the
//                 (telemetry/RequestObserver)                finished request
//
// Why this order: the cache key is built from the inputs in the model's order, so the lookup
// comes after the inputs are checked and ordered (t1 therefore precedes the lookup); statistics
// are recorded before the answer is sent, so a client that reads them after its answer sees
// its request counted; the store and the followers run after the answer, off the instance
// thread, so neither the client nor the next batch waits for them. When the after-answer queue
// is full, that work runs on the answering thread instead (back-pressure, never a lost store or
// a follower left waiting).
//
// Every request is answered exactly once: each stage either passes it on or answers it with
// the error that stopped it (messages name the model and the input or field at fault).
//
// Thread safety: Infer() may be called from any thread and never blocks (it may answer before it
// returns). Answers arrive on instance threads, Redis I/O threads (cache outcomes), or the
// caller's thread (errors, memory-tier hits).
// Ownership: borrows the repository, which must outlive the pipeline; requests hold what they
// were routed to until they are done. Destroy the pipeline after the repository has drained
// (its queued requests are answered through the pipeline): the destructor runs the after-answer
// work still queued.

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cache/response_cache.h"
#include "core/blocking_worker.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "pipeline/admission.h"
#include "pipeline/router.h"
#include "repository/model_repository.h"
#include "route/ensemble.h"

namespace brigade::pipeline {

class RequestPipeline final : private route::StepRunner {
 public:
  struct Options {
    // Borrowed; must outlive the pipeline.
    const repository::ModelRepository* repository = nullptr;
    const Clock* clock = Clock::Real();
    // Bound of the after-answer queue (requests whose store or followers are pending).
    int max_pending_after_answer = 4096;
    // The pre-processing pool that runs attached preprocess steps (ModelVersion::preprocess):
    // its threads, to size against the model instances' compute threads so the two together
    // stay within the cores, and its queue bound (a full queue answers UNAVAILABLE).
    int preprocess_threads = 1;
    int max_queued_preprocess = 1024;
  };

  // INVALID_ARGUMENT without a repository or clock.
  static absl::StatusOr<std::unique_ptr<RequestPipeline>> Create(Options options);
  ~RequestPipeline() override;

  RequestPipeline(const RequestPipeline&) = delete;
  RequestPipeline& operator=(const RequestPipeline&) = delete;

  // Runs one request through the stages above; always answers through request->on_complete.
  void Infer(std::unique_ptr<InferRequest> request);

  // New requests are refused from now on; those already admitted finish.
  void StartDrain() { admission_.StartDrain(); }
  bool draining() const { return admission_.draining(); }
  // Waits until no admitted request is running or has after-answer work left, or `timeout`
  // passes; true when idle.
  bool WaitIdle(absl::Duration timeout) { return admission_.WaitIdle(timeout); }
  int64_t in_flight() { return admission_.in_flight(); }

  struct Context;
  struct ConstructionTag {
   private:
    friend class RequestPipeline;
    ConstructionTag() = default;
  };
  RequestPipeline(ConstructionTag, Options options);

 private:
  // Every stage after admission; entered by Infer() and by ensemble steps.
  void Serve(std::unique_ptr<InferRequest> request);
  // Runs the version's attached preprocess step on the pool's thread, then Continue().
  void Preprocess(std::unique_ptr<InferRequest> request, Route route);
  // From t1 on: the request is in flight; cache lookup, then Execute().
  void Continue(std::unique_ptr<InferRequest> request, Route route);
  // route::StepRunner: one step of an ensemble request already admitted.
  void RunStep(std::unique_ptr<InferRequest> step) override;
  // The routed version runs the request: its scheduler, or its ensemble's steps.
  void Execute(std::unique_ptr<InferRequest> request);
  // The cache's Runner: a miss goes to its version's scheduler, its pending store kept in the
  // request's Context.
  void RunMiss(std::unique_ptr<InferRequest> request, cache::ResponseCache::PendingStore pending);
  // The respond stage and what follows it; installed as the request's only on_complete.
  void Answer(const std::shared_ptr<Context>& context, absl::StatusOr<InferResponse> result);

  const Options options_;
  Admission admission_;
  const Router router_;
  const cache::ResponseCache::Runner run_miss_;
  // Declared last: destroyed first, running what is still queued while the rest is alive (the
  // pre-processing pool's tasks lead to answers, which post to after_answer_).
  BlockingWorker after_answer_;
  BlockingWorker preprocess_pool_;
};

}  // namespace brigade::pipeline

#endif  // BRIGADE_PIPELINE_REQUEST_PIPELINE_H_
