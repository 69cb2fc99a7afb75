#include "tools/doctor/memory_limit.h"

#include <algorithm>
#include <string_view>

#include "core/strings.h"
#include "tools/doctor/cgroup.h"

namespace brigade::doctor {
namespace {

// cgroup v1 writes "no limit" as the largest page-aligned int64 (about 2^63); anything this
// large is no limit.
constexpr uint64_t kNoLimitFloor = uint64_t{1} << 60;

void Tighten(uint64_t bytes, MemoryLimit* out) {
  if (bytes >= kNoLimitFloor) return;
  if (!out->cgroup_bytes.has_value() || bytes < *out->cgroup_bytes) out->cgroup_bytes = bytes;
}

void ReadLimitFile(const HostFiles& host, const std::string& file, MemoryLimit* out) {
  absl::StatusOr<std::string> line = host.ReadLine(file);
  if (!line.ok()) return;
  out->evidence.push_back(StrCat(file, ": ", *line));
  if (*line == "max") return;
  int64_t bytes = 0;
  if (!ParseInteger(*line, &bytes) || bytes < 0) {
    out->evidence.push_back(StrCat(file, ": '", *line, "' is neither 'max' nor a byte count"));
    return;
  }
  Tighten(static_cast<uint64_t>(bytes), out);
}

// "MemTotal:       24543212 kB" among /proc/meminfo's lines.
std::optional<uint64_t> MemTotal(const std::string& meminfo) {
  std::string_view rest(meminfo);
  while (!rest.empty()) {
    const size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    if (!line.starts_with("MemTotal:")) continue;
    line.remove_prefix(9);
    while (line.starts_with(' ')) line.remove_prefix(1);
    if (!line.ends_with(" kB")) return std::nullopt;
    int64_t kib = 0;
    if (!ParseInteger(line.substr(0, line.size() - 3), &kib) || kib <= 0) return std::nullopt;
    return static_cast<uint64_t>(kib) * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> MemoryLimit::usable_bytes() const {
  if (physical_bytes.has_value() && cgroup_bytes.has_value()) {
    return std::min(*physical_bytes, *cgroup_bytes);
  }
  return physical_bytes.has_value() ? physical_bytes : cgroup_bytes;
}

MemoryLimit ReadMemoryLimit(const HostFiles& host) {
  MemoryLimit out;
  absl::StatusOr<std::string> meminfo = host.Read("/proc/meminfo");
  if (meminfo.ok()) {
    out.physical_bytes = MemTotal(*meminfo);
    if (!out.physical_bytes.has_value()) out.evidence.emplace_back("/proc/meminfo: no MemTotal");
  } else {
    out.evidence.emplace_back(meminfo.status().message());
  }
  absl::StatusOr<std::string> cgroups = host.Read("/proc/self/cgroup");
  if (!cgroups.ok()) {
    out.evidence.emplace_back(cgroups.status().message());
    return out;
  }
  for (const CgroupMembership& line : ParseProcSelfCgroup(*cgroups)) {
    if (line.id == "0" && line.controllers.empty()) {
      const std::string_view mount = CgroupV2Mount(host);
      for (std::string dir = line.path;; dir = ParentCgroup(dir)) {
        ReadLimitFile(host, StrCat(CgroupDir(mount, dir), "/memory.max"), &out);
        if (dir == "/") break;
      }
    } else if (line.controllers == "memory") {
      ReadLimitFile(host,
                    StrCat(CgroupDir("/sys/fs/cgroup/memory", line.path), "/memory.limit_in_bytes"),
                    &out);
    }
  }
  return out;
}

}  // namespace brigade::doctor
