#ifndef BRIGADE_TOOLS_DOCTOR_MEMORY_LIMIT_H_
#define BRIGADE_TOOLS_DOCTOR_MEMORY_LIMIT_H_

// How much memory a process started here may use: the host's physical memory (/proc/meminfo's
// MemTotal) and the cgroup's limit (v2: memory.max of the cgroup and of each ancestor, the
// tightest wins; v1: the memory controller's memory.limit_in_bytes). `brigade serve` sizes its
// default in-flight request budget from it. Pure functions of HostFiles, as cgroup.h.
//
// Thread safety: pure. Failure: none; what could not be read is unset and said in `evidence`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/doctor/host_files.h"

namespace brigade::doctor {

struct MemoryLimit {
  std::optional<uint64_t> physical_bytes;
  // Unset: the cgroup sets no limit (or none could be read).
  std::optional<uint64_t> cgroup_bytes;
  std::vector<std::string> evidence;

  // The tighter of the two; unset when neither is known.
  std::optional<uint64_t> usable_bytes() const;
};

MemoryLimit ReadMemoryLimit(const HostFiles& host);

}  // namespace brigade::doctor

#endif  // BRIGADE_TOOLS_DOCTOR_MEMORY_LIMIT_H_
