#ifndef BRIGADE_TOOLS_DOCTOR_HOST_FILES_H_
#define BRIGADE_TOOLS_DOCTOR_HOST_FILES_H_

// HostFiles: the files of /proc and /sys that `brigade doctor` reads, under a root folder. The
// root is "/" on a real host and a fixture folder in tests (testdata/<host>/proc/cpuinfo, ...),
// so every check is a pure function of the files beneath it.
//
// Every file is read whole but bounded (kMaxFileBytes): /proc/cpuinfo of a 512-CPU machine is
// about 1 MiB, everything else a line. Symbolic links are followed inside the root: an absolute
// target is taken relative to the root, as a chroot would, so a fixture's
// usr/lib/x86_64-linux-gnu/libblas.so.3 -> /etc/alternatives/... stays in the fixture.
//
// Thread safety: immutable after construction; reads may run from any thread.
// Failure: Read answers NOT_FOUND for a missing file (checks treat it as "this host has no such
// setting"), OUT_OF_RANGE for one over the bound, and the errno's message for the rest, always
// naming the path as the host sees it ("/sys/...", not the fixture's folder).

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade::doctor {

inline constexpr size_t kMaxFileBytes = size_t{4} << 20;
// Longest symbolic-link chain Resolve follows (the kernel's own limit is 40).
inline constexpr int kMaxLinkHops = 16;
// CPU ids in lists beyond this are refused (the kernel's NR_CPUS tops out at 8192).
inline constexpr int kMaxCpuId = 8191;

class HostFiles {
 public:
  // `root` is the folder that stands for "/"; a trailing slash is optional.
  explicit HostFiles(std::string root);

  const std::string& root() const { return root_; }
  bool is_live_host() const { return root_.empty(); }

  // The file at `path` (absolute, as on the host), whole.
  absl::StatusOr<std::string> Read(std::string_view path) const;
  // Its first line without the newline, surrounding spaces trimmed.
  absl::StatusOr<std::string> ReadLine(std::string_view path) const;
  bool Exists(std::string_view path) const;
  // Names in the folder at `path`, sorted; empty when it is missing.
  std::vector<std::string> List(std::string_view path) const;
  // The chain of paths `path` resolves through, itself first, its final target last (one entry
  // when it is not a link). NOT_FOUND when `path` is missing; FAILED_PRECONDITION for a chain
  // longer than kMaxLinkHops.
  absl::StatusOr<std::vector<std::string>> Resolve(std::string_view path) const;

 private:
  std::string OnDisk(std::string_view path) const;

  std::string root_;  // "" for "/", else the folder without its trailing slash
};

// The feature flags of the first CPU in /proc/cpuinfo ("avx2", "avx512f", ...); empty when it
// has no `flags` line (not an x86 CPU). Read's errors otherwise.
using CpuFlags = std::set<std::string, std::less<>>;
absl::StatusOr<CpuFlags> ReadCpuFlags(const HostFiles& host);

// "0-3,8,10-11" (the kernel's cpulist format) -> {0,1,2,3,8,10,11}. An empty text is an empty
// list. INVALID_ARGUMENT names the bad element; ids above kMaxCpuId are refused.
absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text);
// The inverse, with runs folded: {0,1,2,5} -> "0-2,5".
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace brigade::doctor

#endif  // BRIGADE_TOOLS_DOCTOR_HOST_FILES_H_
