#ifndef BRIGADE_CORE_STAGE_CLOCK_H_
#define BRIGADE_CORE_STAGE_CLOCK_H_

// StageClock: where a request's time went. Monotonic nanosecond stamps for the six stages of the
// request path plus queue enter/leave:
//
//   t0 arrival       first byte of the request read by the transport
//   t1 preprocessed  decoded, routed, cache checked, preprocessing done; about to be queued
//   t2 infer start   its batch handed to the backend
//   t3 infer end     the backend returned
//   t4 postprocessed outputs sliced/converted for this request
//   t5 sent          last byte of the response written
//
// plus `decoded` (the request's bytes fully received and decoded into an InferRequest, marked by
// the transport right after its codec) between t0 and t1, which splits receive+parse from
// preprocessing.
//
// Unset stamps are 0 (a cache hit never has t2/t3). A value type; not synchronized: exactly one
// thread owns a request at a time, and the hand-offs between threads (queue push/pop, asio post)
// already order the writes.

#include <array>
#include <cstdint>
#include <string_view>

namespace brigade {

enum class Stage : uint8_t {
  kArrival = 0,
  kPreprocessed,
  kInferStart,
  kInferEnd,
  kPostprocessed,
  kSent,
  kQueueEnter,
  kQueueLeave,
  kDecoded,
};
inline constexpr int kNumStages = 9;

// "arrival", "preprocessed", ... for logs, traces and metrics labels.
std::string_view StageName(Stage stage);

class StageClock {
 public:
  void Mark(Stage stage, int64_t now_ns) { ns_[Index(stage)] = now_ns; }
  // Marks only if not yet marked (the first writer wins, e.g. t0 across retries).
  void MarkOnce(Stage stage, int64_t now_ns) {
    if (ns_[Index(stage)] == 0) ns_[Index(stage)] = now_ns;
  }
  int64_t at(Stage stage) const { return ns_[Index(stage)]; }
  bool has(Stage stage) const { return ns_[Index(stage)] != 0; }

  // Duration from `from` to `to`, or 0 if either is unset or they are out of order.
  int64_t BetweenNs(Stage from, Stage to) const {
    const int64_t a = at(from);
    const int64_t b = at(to);
    return (a == 0 || b == 0 || b < a) ? 0 : b - a;
  }

 private:
  static constexpr size_t Index(Stage stage) { return static_cast<size_t>(stage); }
  std::array<int64_t, kNumStages> ns_{};
};

}  // namespace brigade

#endif  // BRIGADE_CORE_STAGE_CLOCK_H_
