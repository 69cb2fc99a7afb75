#ifndef BRIGADE_TOOLS_LOADGEN_ARRIVAL_SCHEDULE_H_
#define BRIGADE_TOOLS_LOADGEN_ARRIVAL_SCHEDULE_H_

// ArrivalSchedule: the intended send times of an open-loop run, decided before and independently
// of how fast the server answers. That independence is what keeps the measurement free of
// coordinated omission: a request's latency is counted from the time it *should* have been sent,
// so a server stall shows up in every request that was due during it, not only in the one that
// happened to be waiting.
//
//   constant: request i is due at i / rate seconds.
//   poisson:  inter-arrival gaps are exponential with mean 1 / rate (a memoryless arrival
//             process, like independent users), drawn from a seeded generator: the same seed
//             gives the same schedule.
//
// Thread safety: Next() may be called from any number of workers; each slot is handed out exactly
// once, in order of intended time.

#include <cstdint>
#include <random>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace brigade::loadgen {

enum class ArrivalKind { kConstant, kPoisson };

class ArrivalSchedule {
 public:
  struct Slot {
    int64_t index = 0;
    // Intended send time, in ns after the run's start.
    int64_t offset_ns = 0;
  };

  // `rate_per_s` > 0.
  ArrivalSchedule(ArrivalKind kind, double rate_per_s, uint64_t seed);

  Slot Next();

 private:
  const ArrivalKind kind_;
  const double mean_gap_ns_;
  absl::Mutex mu_;
  int64_t next_index_ ABSL_GUARDED_BY(mu_) = 0;
  double next_offset_ns_ ABSL_GUARDED_BY(mu_) = 0;
  std::mt19937_64 random_ ABSL_GUARDED_BY(mu_);
};

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_ARRIVAL_SCHEDULE_H_
