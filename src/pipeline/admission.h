#ifndef BRIGADE_PIPELINE_ADMISSION_H_
#define BRIGADE_PIPELINE_ADMISSION_H_

// Admission: the request pipeline's first stage. It stamps a request's arrival (t0, unless the
// transport already did), refuses new requests once the server drains, and counts the requests
// in flight, from the moment they are accepted until the work after their answer (the cache
// store, the coalesced followers) is done, so that WaitIdle() returning true means nothing is
// running and nothing is left to land.
//
// Thread safety: every method is safe from any thread. Admit() and Enter()/Leave() never block.
// Failure: Admit() answers UNAVAILABLE while draining.

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/infer_request.h"

namespace brigade::pipeline {

class Admission {
 public:
  // `clock` is borrowed and must outlive the stage.
  explicit Admission(const Clock* clock) : clock_(clock) {}

  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // Stamps t0 and accepts `request`, or refuses it (the caller answers it with the error).
  absl::Status Admit(InferRequest& request) const;

  // One accepted request is in flight / is completely done. Every Enter() has one Leave().
  void Enter();
  void Leave();

  // From now on Admit() refuses; requests already accepted finish.
  void StartDrain();
  bool draining() const;
  // Waits until no request is in flight or `timeout` passes; true when idle.
  bool WaitIdle(absl::Duration timeout);
  // Requests accepted and not completely done.
  int64_t in_flight();

 private:
  const Clock* const clock_;
  std::atomic<bool> draining_{false};
  absl::Mutex mu_;
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace brigade::pipeline

#endif  // BRIGADE_PIPELINE_ADMISSION_H_
