#ifndef BRIGADE_SCHEDULER_CPU_AFFINITY_H_
#define BRIGADE_SCHEDULER_CPU_AFFINITY_H_

// Placement of instance threads on cores.
//
// Each instance gets `intra_op_threads` cores; its compute threads (OpenMP/oneDNN workers, which
// inherit the affinity of the thread that creates them) then stay inside that set, and the sets
// of different instances do not overlap until the cores run out (then they wrap around).

#include <vector>

#include "absl/status/status.h"

namespace brigade::scheduler {

// Cores this process may run on (its affinity mask), ascending; never empty.
std::vector<int> AvailableCpus();

// The cores for instance `index`: `threads` entries taken round-robin from `cpus`
// (AvailableCpus() when `cpus` is empty), starting at index * threads.
std::vector<int> InstanceCpus(int index, int threads, const std::vector<int>& cpus);

// Pins the calling thread to `cpus`. INVALID_ARGUMENT if a CPU is not available.
absl::Status PinCurrentThread(const std::vector<int>& cpus);

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_CPU_AFFINITY_H_
