#ifndef BRIGADE_ROUTE_SLO_CONTROLLER_H_
#define BRIGADE_ROUTE_SLO_CONTROLLER_H_

// SloController: closes the loop between an SLO router's choices and the tail it delivers.
//
// ChooseBySlo sends a request to the most accurate variant whose predicted p99 completion meets
// the deadline. For the router's target p99 that per-request test is stricter than the SLO,
// which bounds the p99 over all requests: the prediction adds tails (the profile's p99, the queue
// ahead, the recent p99 of lateness), so at low load it routes away from a variant that would
// have met the SLO, and under a load step it may react late. The controller measures what the
// router actually delivers — each answer's latency from arrival, whichever variant served it —
// in windows, and moves a margin that the router adds to the target deadline:
//
//   window p99 >  target          margin -= (p99 - target)           (fast: the SLO is missed)
//   window p99 <  low × target    margin += gain × (low × target - p99)  (slow: room to spare)
//   otherwise                     unchanged (the dead band: no oscillation around the target)
//
// clamped to [-target, max_margin_fraction × target]. A request with its own timeout is not
// moved: its deadline is its own, not a share of a percentile.
//
// Thread safety: all methods are safe from any thread. MarginNs is one relaxed atomic load (it
// runs per routed request); Record takes a mutex for a few stores, and the p99 of a closing
// window (a selection over at most kWindowCapacity samples) is computed outside it.
// Failure: none; it only adjusts a number.

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace brigade::route {

class SloController {
 public:
  struct Options {
    int64_t target_ns = 0;
    // The dead band's lower edge, as a fraction of the target.
    double low = 0.8;
    // How much of the room below the band one window gives back as margin.
    double gain = 0.25;
    // The most the margin may add to the target, as a fraction of it: as much again as the
    // target, since the prediction it corrects sums several tails.
    double max_margin_fraction = 1.0;
    // A window closes once it holds min_samples answers and spans window_ns, or is full.
    int min_samples = 100;
    int64_t window_ns = 100'000'000;
  };
  static constexpr int kWindowCapacity = 1024;

  explicit SloController(Options options);

  // One answer of the router, `latency_ns` after its arrival, at `now_ns`.
  void Record(int64_t latency_ns, int64_t now_ns);

  // What to add to the target deadline now (may be negative).
  int64_t MarginNs() const { return margin_ns_.load(std::memory_order_relaxed); }
  // The p99 of the last closed window; 0 before the first.
  int64_t LastWindowP99Ns() const { return last_p99_ns_.load(std::memory_order_relaxed); }

 private:
  void Adjust(int64_t p99_ns);

  const Options options_;
  absl::Mutex mu_;
  std::array<int64_t, kWindowCapacity> window_ ABSL_GUARDED_BY(mu_);
  int count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t window_start_ns_ ABSL_GUARDED_BY(mu_) = -1;
  // Serializes Adjust's read-modify-write of the margin across closing windows.
  absl::Mutex adjust_mu_;
  std::atomic<int64_t> margin_ns_{0};
  std::atomic<int64_t> last_p99_ns_{0};
};

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_SLO_CONTROLLER_H_
