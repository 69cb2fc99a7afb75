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
#include <string_view>
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

// One line of /proc/self/cgroup, "hierarchy-ID:controller-list:cgroup-path"; v2's is id "0"
// with no controllers. Lines without two colons are skipped.
struct CgroupMembership {
  std::string id;
  std::string controllers;
  std::string path;
};
std::vector<CgroupMembership> ParseProcSelfCgroup(std::string_view text);

// Where the v2 hierarchy is mounted: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host
// (v1 controllers, v2 beside them).
std::string_view CgroupV2Mount(const HostFiles& host);
// `cgroup`'s folder under `mount`, and its parent cgroup ("/" stays "/").
std::string CgroupDir(std::string_view mount, const std::string& cgroup);
std::string ParentCgroup(const std::string& path);

// "150000 100000" (cpu.max) -> 1.5; "max 100000" -> unset. INVALID_ARGUMENT otherwise.
absl::StatusOr<std::optional<double>> ParseCpuMax(std::string_view line);

}  // namespace brigade::doctor

#endif  // BRIGADE_TOOLS_DOCTOR_CGROUP_H_
