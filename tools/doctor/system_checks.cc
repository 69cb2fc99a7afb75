// The checks about the rest of the system: the BLAS behind libtorch, transparent huge pages and
// the open-files limit; and the list of every check (see checks.h for the verdicts).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>

#include "core/strings.h"
#include "tools/doctor/checks.h"

namespace brigade::doctor {
namespace {

// The word in brackets of a sysfs choice file: "always [madvise] never" -> "madvise".
std::string Chosen(std::string_view line) {
  const size_t open = line.find('[');
  const size_t close = line.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::string(line);
  return std::string(line.substr(open + 1, close - open - 1));
}

std::string JoinChain(const std::vector<std::string>& chain) {
  std::string out;
  for (const std::string& path : chain) out += StrCat(out.empty() ? "" : " -> ", path);
  return out;
}

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kWarn:
      return "warn";
    case Verdict::kFail:
      return "fail";
    case Verdict::kUnknown:
      break;
  }
  return "unknown";
}

Finding CheckBlas(const HostFiles& host) {
  Finding f;
  f.check = "blas";
  for (const std::string& triplet : host.List("/usr/lib")) {
    if (!triplet.ends_with("-linux-gnu")) continue;
    const std::string link = StrCat("/usr/lib/", triplet, "/libblas.so.3");
    absl::StatusOr<std::vector<std::string>> chain = host.Resolve(link);
    if (!chain.ok()) {
      if (!absl::IsNotFound(chain.status())) f.evidence.emplace_back(chain.status().message());
      continue;
    }
    f.evidence.push_back(JoinChain(*chain));
    const std::string& target = chain->back();
    const std::string alternative = StrCat("libblas.so.3-", triplet);
    if (target.find("openblas") != std::string::npos) {
      f.verdict = Verdict::kPass;
      f.summary = "libblas.so.3 is OpenBLAS";
    } else if (target.find("blis") != std::string::npos) {
      f.verdict = Verdict::kPass;
      f.summary = "libblas.so.3 is BLIS";
    } else if (target.find("mkl") != std::string::npos) {
      f.verdict = Verdict::kPass;
      f.summary = "libblas.so.3 is MKL";
    } else if (target.find("atlas") != std::string::npos) {
      f.verdict = Verdict::kPass;
      f.summary = "libblas.so.3 is ATLAS";
    } else if (target.ends_with("/blas/libblas.so.3") ||
               target.find("/blas/libblas.so.3.") != std::string::npos) {
      f.verdict = Verdict::kFail;
      f.summary = "libblas.so.3 is the reference BLAS: libtorch's matrix products run ~40x slower";
      f.change = StrCat("apt-get install libopenblas0-pthread, or update-alternatives --set ",
                        alternative, " /usr/lib/", triplet, "/openblas-pthread/libblas.so.3");
    } else {
      f.verdict = Verdict::kWarn;
      f.summary = StrCat("libblas.so.3 is ", target, ", not a BLAS this check knows");
      f.change = StrCat("check update-alternatives --display ", alternative);
    }
    return f;
  }
  f.summary = "no libblas.so.3: libtorch (TorchScript models) is not installed";
  return f;
}

Finding CheckThp(const HostFiles& host) {
  Finding f;
  f.check = "thp";
  const std::string enabled_file = "/sys/kernel/mm/transparent_hugepage/enabled";
  const std::string defrag_file = "/sys/kernel/mm/transparent_hugepage/defrag";
  absl::StatusOr<std::string> enabled = host.ReadLine(enabled_file);
  if (!enabled.ok()) {
    f.summary = "no transparent huge pages in this kernel";
    f.evidence.emplace_back(enabled.status().message());
    return f;
  }
  f.evidence.push_back(StrCat(enabled_file, ": ", *enabled));
  absl::StatusOr<std::string> defrag = host.ReadLine(defrag_file);
  if (defrag.ok()) f.evidence.push_back(StrCat(defrag_file, ": ", *defrag));
  const std::string mode = Chosen(*enabled);
  const std::string defrag_mode = defrag.ok() ? Chosen(*defrag) : "";
  f.summary = StrCat("transparent huge pages: ", mode,
                     defrag_mode.empty() ? "" : StrCat(", defrag ", defrag_mode));
  if (mode == "always" && defrag_mode != "always") {
    f.verdict = Verdict::kPass;
    return f;
  }
  f.verdict = Verdict::kWarn;
  if (mode == "madvise") {
    f.summary += ": Brigade does not madvise its tensors, so weights and arenas get 4 KiB pages";
    f.change =
        "echo always > /sys/kernel/mm/transparent_hugepage/enabled, or start the server with "
        "GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (malloc then madvises its large blocks)";
  } else if (mode != "always") {
    f.summary += ": weights and arenas get 4 KiB pages (more TLB misses on large models)";
    f.change = "echo always > /sys/kernel/mm/transparent_hugepage/enabled";
  } else {
    f.summary += ": page faults stall on direct compaction";
    f.change = "echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag";
  }
  return f;
}

Finding CheckOpenFiles(const HostFiles& host, const DoctorInputs& inputs) {
  Finding f;
  f.check = "nofile";
  absl::StatusOr<std::string> limits = host.Read("/proc/self/limits");
  if (!limits.ok()) {
    f.summary = "cannot read the open-files limit";
    f.evidence.emplace_back(limits.status().message());
    return f;
  }
  const size_t at = limits->find("Max open files");
  if (at == std::string::npos) {
    f.summary = "/proc/self/limits has no 'Max open files' line";
    return f;
  }
  std::string_view line(*limits);
  line = line.substr(at, line.find('\n', at) - at);
  std::string_view shown = line;
  while (shown.ends_with(' ')) shown.remove_suffix(1);
  f.evidence.push_back(StrCat("/proc/self/limits: ", shown));
  // "Max open files            1024                 524288               files"
  std::vector<std::string_view> words;
  std::string_view rest = line.substr(std::string_view("Max open files").size());
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = rest.find(' ');
    words.push_back(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  }
  auto limit = [](std::string_view word, int64_t* out) {
    if (word == "unlimited") {
      *out = std::numeric_limits<int64_t>::max();
      return true;
    }
    return ParseInteger(word, out);
  };
  int64_t soft = 0;
  int64_t hard = 0;
  if (words.size() < 2 || !limit(words[0], &soft) || !limit(words[1], &hard)) {
    f.summary = "cannot parse the 'Max open files' line";
    return f;
  }
  const int64_t needed = int64_t{inputs.max_connections} + kReservedFiles;
  f.evidence.push_back(StrCat("needed: --max-connections ", inputs.max_connections, " + ",
                              kReservedFiles, " reserved (listeners, model files, logs)"));
  f.summary =
      StrCat("open-files limit ", words[0], " (hard ", words[1], ") for ", needed, " descriptors");
  if (soft >= needed) {
    f.verdict = Verdict::kPass;
    return f;
  }
  f.verdict = Verdict::kFail;
  f.summary += ": accept() fails with EMFILE before the connection limit";
  f.change = hard >= needed ? StrCat("ulimit -n ", needed,
                                     " before starting the server (systemd: "
                                     "LimitNOFILE=",
                                     needed, ")")
                            : StrCat("raise the hard limit to ", needed,
                                     " (/etc/security/limits.conf nofile, systemd LimitNOFILE=, "
                                     "docker --ulimit nofile=",
                                     needed, ")");
  return f;
}

Finding CheckAlignment(const HostFiles& host, const std::optional<TensorAlignment>& alignment) {
  Finding f;
  f.check = "alignment";
  if (!alignment.has_value()) {
    f.summary = "no tensor alignments given";
    return f;
  }
  absl::StatusOr<CpuFlags> flags = ReadCpuFlags(host);
  if (!flags.ok()) {
    f.summary = "cannot read the CPU's flags";
    f.evidence.emplace_back(flags.status().message());
    return f;
  }
  const size_t vector_bytes = flags->contains("avx512f") ? 64 : flags->contains("avx") ? 32 : 16;
  f.evidence.push_back(StrCat("widest vector: ", vector_bytes, " bytes (",
                              vector_bytes == 64   ? "AVX-512"
                              : vector_bytes == 32 ? "AVX"
                                                   : "SSE",
                              ", /proc/cpuinfo flags)"));
  size_t least = vector_bytes;
  for (const auto& [what, bytes] :
       {std::pair<std::string_view, size_t>{"owned tensors", alignment->owned_bytes},
        {"engine arenas", alignment->arena_bytes},
        {"request bodies (binary tensors)", alignment->body_bytes}}) {
    if (bytes == 0) continue;
    f.evidence.push_back(StrCat(what, ": ", bytes, "-byte aligned"));
    least = std::min(least, bytes);
  }
  f.summary = StrCat("tensor buffers ", least >= vector_bytes ? "" : "not all ", "aligned to the ",
                     vector_bytes, "-byte vectors");
  if (least >= vector_bytes) {
    f.verdict = Verdict::kPass;
    return f;
  }
  f.verdict = Verdict::kWarn;
  f.summary += StrCat(": some only to ", least, " bytes, so vector loads span two cache lines");
  f.change = StrCat("build with the alignments raised to ", vector_bytes, " bytes");
  return f;
}

std::vector<Finding> RunChecks(const HostFiles& host, const DoctorInputs& inputs) {
  return {CheckSmt(host),
          CheckCpufreq(host),
          CheckIsa(host, inputs.engine),
          CheckNuma(host, inputs),
          CheckThreads(host, inputs),
          CheckCpuQuota(host, inputs),
          CheckBlas(host),
          CheckThp(host),
          CheckOpenFiles(host, inputs),
          CheckAlignment(host, inputs.alignment)};
}

}  // namespace brigade::doctor
