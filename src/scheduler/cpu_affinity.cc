#include "scheduler/cpu_affinity.h"

#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"

namespace brigade::scheduler {

std::vector<int> AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

std::vector<int> InstanceCpus(int index, int threads, const std::vector<int>& cpus) {
  const std::vector<int> pool = cpus.empty() ? AvailableCpus() : cpus;
  std::vector<int> out;
  const int count = std::max(1, std::min<int>(threads, static_cast<int>(pool.size())));
  out.reserve(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) {
    out.push_back(pool[static_cast<size_t>(index * count + k) % pool.size()]);
  }
  return out;
}

absl::Status PinCurrentThread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      return absl::InvalidArgumentError(StrCat("cpu ", cpu, " is out of range"));
    }
    CPU_SET(cpu, &set);
  }
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    return absl::InvalidArgumentError(
        fmt::format("cannot pin thread to cpus [{}]: {}", fmt::join(cpus, ","), std::strerror(rc)));
  }
  return absl::OkStatus();
}

}  // namespace brigade::scheduler
