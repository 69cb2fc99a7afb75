#include "tools/doctor/cgroup.h"

#include <algorithm>
#include <string_view>

#include "core/strings.h"

namespace brigade::doctor {
namespace {

void Tighten(std::optional<double> quota, CgroupCpu* out) {
  if (quota.has_value() && (!out->quota_cpus.has_value() || *quota < *out->quota_cpus)) {
    out->quota_cpus = quota;
  }
}

void ReadV2(const HostFiles& host, const std::string& cgroup, CgroupCpu* out) {
  const std::string_view mount = CgroupV2Mount(host);
  for (std::string dir = cgroup;; dir = ParentCgroup(dir)) {
    const std::string file = StrCat(CgroupDir(mount, dir), "/cpu.max");
    absl::StatusOr<std::string> line = host.ReadLine(file);
    if (line.ok()) {
      absl::StatusOr<std::optional<double>> quota = ParseCpuMax(*line);
      out->evidence.push_back(StrCat(file, ": ", *line));
      if (quota.ok()) {
        Tighten(*quota, out);
      } else {
        out->evidence.push_back(StrCat(file, ": ", quota.status().message()));
      }
    }
    if (dir == "/") break;
  }
  const std::string cpuset_file = StrCat(CgroupDir(mount, cgroup), "/cpuset.cpus.effective");
  absl::StatusOr<std::string> cpuset = host.ReadLine(cpuset_file);
  if (cpuset.ok() && !cpuset->empty()) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(*cpuset);
    out->evidence.push_back(StrCat(cpuset_file, ": ", *cpuset));
    if (cpus.ok()) out->cpuset = *std::move(cpus);
  }
}

void ReadV1(const HostFiles& host, const std::string& cgroup, CgroupCpu* out) {
  for (const std::string_view mount :
       {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpuacct,cpu"}) {
    const std::string dir = CgroupDir(mount, cgroup);
    absl::StatusOr<std::string> quota = host.ReadLine(StrCat(dir, "/cpu.cfs_quota_us"));
    absl::StatusOr<std::string> period = host.ReadLine(StrCat(dir, "/cpu.cfs_period_us"));
    if (!quota.ok() || !period.ok()) continue;
    out->evidence.push_back(
        StrCat(dir, "/cpu.cfs_quota_us: ", *quota, ", cpu.cfs_period_us: ", *period));
    int64_t quota_us = 0;
    int64_t period_us = 0;
    if (ParseInteger(*quota, &quota_us) && ParseInteger(*period, &period_us) && quota_us > 0 &&
        period_us > 0) {
      Tighten(static_cast<double>(quota_us) / static_cast<double>(period_us), out);
    }
    return;
  }
}

}  // namespace

absl::StatusOr<std::optional<double>> ParseCpuMax(std::string_view line) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("cpu.max '", line, "' is not 'QUOTA PERIOD'"));
  }
  const std::string_view quota = line.substr(0, space);
  int64_t period_us = 0;
  if (!ParseInteger(line.substr(space + 1), &period_us) || period_us <= 0) {
    return absl::InvalidArgumentError(
        StrCat("cpu.max period '", line.substr(space + 1), "' is not a positive integer"));
  }
  if (quota == "max") return std::optional<double>();
  int64_t quota_us = 0;
  if (!ParseInteger(quota, &quota_us) || quota_us <= 0) {
    return absl::InvalidArgumentError(
        StrCat("cpu.max quota '", quota, "' is neither 'max' nor a positive integer"));
  }
  return std::optional<double>(static_cast<double>(quota_us) / static_cast<double>(period_us));
}

std::vector<CgroupMembership> ParseProcSelfCgroup(std::string_view text) {
  std::vector<CgroupMembership> lines;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    lines.push_back({std::string(line.substr(0, first)),
                     std::string(line.substr(first + 1, second - first - 1)),
                     std::string(line.substr(second + 1))});
  }
  return lines;
}

std::string_view CgroupV2Mount(const HostFiles& host) {
  return !host.Exists("/sys/fs/cgroup/cgroup.controllers") &&
                 host.Exists("/sys/fs/cgroup/unified/cgroup.controllers")
             ? "/sys/fs/cgroup/unified"
             : "/sys/fs/cgroup";
}

std::string CgroupDir(std::string_view mount, const std::string& cgroup) {
  return cgroup == "/" ? std::string(mount) : StrCat(mount, cgroup);
}

std::string ParentCgroup(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

CgroupCpu ReadCgroupCpu(const HostFiles& host) {
  CgroupCpu out;
  absl::StatusOr<std::string> text = host.Read("/proc/self/cgroup");
  if (!text.ok()) {
    out.evidence.emplace_back(text.status().message());
    return out;
  }
  out.known = true;
  std::optional<std::string> v2;
  std::optional<std::string> v1_cpu;
  for (const CgroupMembership& line : ParseProcSelfCgroup(*text)) {
    if (line.id == "0" && line.controllers.empty()) {
      v2 = line.path;
      continue;
    }
    std::string_view list = line.controllers;
    while (!list.empty()) {
      const size_t comma = list.find(',');
      if (list.substr(0, comma) == "cpu") v1_cpu = line.path;
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
  }
  if (v2.has_value()) {
    out.evidence.push_back(StrCat("/proc/self/cgroup: 0::", *v2));
    ReadV2(host, *v2, &out);
  }
  if (v1_cpu.has_value()) {
    out.evidence.push_back(StrCat("/proc/self/cgroup: cpu:", *v1_cpu));
    ReadV1(host, *v1_cpu, &out);
  }
  return out;
}

}  // namespace brigade::doctor
