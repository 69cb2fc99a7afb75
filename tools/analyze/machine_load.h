#ifndef BRIGADE_TOOLS_ANALYZE_MACHINE_LOAD_H_
#define BRIGADE_TOOLS_ANALYZE_MACHINE_LOAD_H_

// How busy the machine was with work other than the sweep. `brigade analyze` runs the server and
// the load generator on one machine; anything else using its cores (a compiler, another test)
// inflates the measured latencies, so the report says how much of it there was:
//
//   other cores = (Δ busy CPU time of the whole machine − Δ CPU time of this process and its
//                  reaped children) / Δ wall time,
//
// with the machine's busy time from the first line of /proc/stat (user + nice + system + irq +
// softirq + steal; idle and iowait are not busy) and this process's own from getrusage(SELF) +
// getrusage(CHILDREN) (children count once waited for, which ServerProcess does). Taken over a
// whole sweep, 0.05 means a quiet machine and 1.0 a whole core's worth of other work.
//
// Thread safety: SampleCpu reads process-wide counters and may be called from any thread; the
// rest is pure. Failure: SampleCpu answers UNAVAILABLE when /proc/stat cannot be read or parsed
// (e.g. not Linux); callers then report "unknown".

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace brigade::analyze {

struct CpuSample {
  double wall_s = 0;
  // CPU seconds all processes spent busy, over all cores.
  double machine_busy_s = 0;
  // CPU seconds of this process and its waited-for children.
  double own_s = 0;
  // CPU seconds the hypervisor gave other guests while this machine's vCPUs wanted to run
  // (/proc/stat's steal; part of machine_busy_s). 0 on bare metal.
  double stolen_s = 0;
};

// Clock ticks (USER_HZ) in the aggregate "cpu" line of /proc/stat's contents.
struct CpuTicks {
  uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
  uint64_t steal = 0;  // of which stolen by the hypervisor
};
// INVALID_ARGUMENT when the text has no such line or it has fewer than 8 numbers.
absl::StatusOr<CpuTicks> ParseCpuTicks(std::string_view proc_stat);

// The counters now.
absl::StatusOr<CpuSample> SampleCpu();

// Cores' worth of CPU time others used between the samples (never negative; 0 when no time
// passed).
double OtherCoresBusy(const CpuSample& before, const CpuSample& after);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_MACHINE_LOAD_H_
