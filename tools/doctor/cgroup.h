#ifndef BRIGADE_TOOLS_DOCTOR_CGROUP_H_
#define BRIGADE_TOOLS_DOCTOR_CGROUP_H_

// The CPU limits of the cgroup `brigade doctor` runs in (which a `brigade serve` started the same
// way shares): the CFS bandwidth quota and the cpuset. cgroup v2 first (/proc/self/cgroup's
// "0::" line; cpu.max of the cgroup and of each ancestor, the tightest wins), then v1 (the cpu
// controller's cpu.cfs_quota_us / cpu.cfs_period_us). Pure functions of HostFiles.
//
// Thread safety: pure. Failure: none; what could not be read is said in `evidence`.

#include <optional>
#include <string>
#include <vector>

#include "tools/doctor/host_files.h"

namespace brigade::doctor {

struct CgroupCpu {
  // False when /proc/self/cgroup could not be read: nothing below is known.
  bool known = false;
  // CPUs' worth of time per period the quota allows (quota / period); unset: no quota.
  std::optional<double> quota_cpus;
  // The v2 cpuset's effective CPUs; unset when the cgroup has none.
  std::optional<std::vector<int>> cpuset;
  std::vector<std::string> evidence;
};

CgroupCpu ReadCgroupCpu(const HostFiles& host);

// "150000 100000" (cpu.max) -> 1.5; "max 100000" -> unset. INVALID_ARGUMENT otherwise.
absl::StatusOr<std::optional<double>> ParseCpuMax(std::string_view line);

}  // namespace brigade::doctor

#endif  // BRIGADE_TOOLS_DOCTOR_CGROUP_H_
