#ifndef BRIGADE_SCHEDULER_RESPONSE_ORDERER_H_
#define BRIGADE_SCHEDULER_RESPONSE_ORDERER_H_

// ResponseOrderer: `preserve_ordering` — answers requests in the order they were admitted,
// whatever instance ran them and whenever it finished.
//
// Every admitted request has a sequence number (0, 1, 2, ... in admission order, given by the
// BatchQueue). An executed request's result is handed to Complete(); it is answered once every
// earlier sequence number has been answered or skipped. Requests answered outside the order —
// timed out or cancelled in the queue, refused while draining — are Skip()ped, so they never
// hold the others back (as in Triton, only responses of executed requests are ordered).
//
// Bound: at most (queue bound + rows in flight) results are held, since only admitted requests
// have sequence numbers.
// Thread safety: Complete and Skip may be called from any thread. Callbacks run outside the lock;
// while one thread is answering a run of ready results, other callers only deposit theirs, so the
// order of answers is exactly the sequence order.

#include <cstdint>
#include <map>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/infer_request.h"

namespace brigade::scheduler {

class ResponseOrderer {
 public:
  // Takes the request and its result; answers it (and any results it unblocks) now, or later.
  void Complete(uint64_t sequence, std::unique_ptr<InferRequest> request,
                absl::StatusOr<InferResponse> result);
  // The request with `sequence` was answered elsewhere; stop waiting for it.
  void Skip(uint64_t sequence);

  // Results held back waiting for an earlier one.
  size_t held() const;

 private:
  struct Entry {
    std::unique_ptr<InferRequest> request;  // null for a skipped sequence
    absl::StatusOr<InferResponse> result;
  };
  void Deposit(uint64_t sequence, Entry entry);

  mutable absl::Mutex mu_;
  std::map<uint64_t, Entry> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
  bool releasing_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_RESPONSE_ORDERER_H_
