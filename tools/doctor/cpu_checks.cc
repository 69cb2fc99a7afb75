// The checks about cores: SMT, frequency, instruction set, NUMA placement, thread counts against
// cores and against the cgroup's quota (see checks.h for what each one passes, warns and fails).

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "core/strings.h"
#include "tools/doctor/cgroup.h"
#include "tools/doctor/checks.h"

namespace brigade::doctor {
namespace {

// Lists of per-CPU evidence stop here; the rest is counted.
constexpr size_t kMaxEvidenceLines = 6;

void AddCapped(std::vector<std::string> lines, std::vector<std::string>* evidence) {
  for (size_t i = 0; i < lines.size() && i < kMaxEvidenceLines; ++i) {
    evidence->push_back(std::move(lines[i]));
  }
  if (lines.size() > kMaxEvidenceLines) {
    evidence->push_back(StrCat("... and ", lines.size() - kMaxEvidenceLines, " more like it"));
  }
}

std::vector<int> OnlineCpus(const HostFiles& host, std::vector<std::string>* evidence) {
  absl::StatusOr<std::string> online = host.ReadLine("/sys/devices/system/cpu/online");
  if (online.ok()) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(*online);
    if (evidence != nullptr) {
      evidence->push_back(StrCat("/sys/devices/system/cpu/online: ", *online));
    }
    if (cpus.ok()) return *std::move(cpus);
  }
  std::vector<int> cpus;
  for (const std::string& name : host.List("/sys/devices/system/cpu")) {
    int id = 0;
    if (name.starts_with("cpu") && ParseInteger(std::string_view(name).substr(3), &id) && id >= 0 &&
        id <= kMaxCpuId) {
      cpus.push_back(id);
    }
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

std::string CpuDir(int cpu) { return StrCat("/sys/devices/system/cpu/cpu", cpu); }

std::string Ghz(int64_t khz) { return fmt::format("{:.2f} GHz", static_cast<double>(khz) / 1e6); }

// oneDNN's ISA names, weakest first; a CPU's best is the last whose flags it has all of.
struct IsaLevel {
  std::string_view name;
  std::vector<std::string_view> flags;
};
const std::vector<IsaLevel>& IsaLevels() {
  static const auto* levels = new std::vector<IsaLevel>{
      {"sse41", {"sse4_1"}},
      {"avx", {"avx"}},
      {"avx2", {"avx2"}},
      {"avx2_vnni", {"avx2", "avx_vnni"}},
      {"avx512_core", {"avx512f", "avx512bw", "avx512vl", "avx512dq"}},
      {"avx512_core_vnni", {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni"}},
      {"avx512_core_bf16",
       {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16"}},
      {"avx512_core_amx",
       {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16", "amx_tile",
        "amx_int8", "amx_bf16"}},
  };
  return *levels;
}

int IsaRank(std::string_view name) {
  const auto& levels = IsaLevels();
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::vector<int> AvailableCpus(const HostFiles& host, std::vector<std::string>* evidence) {
  std::vector<int> cpus = OnlineCpus(host, evidence);
  const CgroupCpu cgroup = ReadCgroupCpu(host);
  if (cgroup.cpuset.has_value()) {
    std::vector<int> narrowed;
    std::set_intersection(cpus.begin(), cpus.end(), cgroup.cpuset->begin(), cgroup.cpuset->end(),
                          std::back_inserter(narrowed));
    if (evidence != nullptr) {
      evidence->push_back(StrCat("cgroup cpuset: ", FormatCpuList(*cgroup.cpuset)));
    }
    cpus = std::move(narrowed);
  }
  return cpus;
}

int ThreadsPerInstance(const ModelPlan& model, int available_cpus) {
  if (!model.compute_threads) return 1;
  if (model.intra_op_threads > 0) return model.intra_op_threads;
  return std::max(1, available_cpus / std::max(1, model.instances));
}

Finding CheckSmt(const HostFiles& host) {
  Finding f;
  f.check = "smt";
  const std::vector<int> online = OnlineCpus(host, nullptr);
  std::vector<std::string> shared;
  std::set<int> one_per_core;
  int read = 0;
  for (const int cpu : online) {
    const std::string file = StrCat(CpuDir(cpu), "/topology/thread_siblings_list");
    absl::StatusOr<std::string> line = host.ReadLine(file);
    if (!line.ok()) continue;
    absl::StatusOr<std::vector<int>> siblings = ParseCpuList(*line);
    if (!siblings.ok() || siblings->empty()) {
      f.evidence.push_back(StrCat(file, ": '", *line, "' is not a cpu list"));
      continue;
    }
    ++read;
    one_per_core.insert(siblings->front());
    if (siblings->size() > 1) shared.push_back(StrCat(file, ": ", *line));
  }
  absl::StatusOr<std::string> control = host.ReadLine("/sys/devices/system/cpu/smt/control");
  if (control.ok()) f.evidence.push_back(StrCat("/sys/devices/system/cpu/smt/control: ", *control));
  if (read == 0) {
    f.verdict = Verdict::kUnknown;
    f.summary = "no CPU's topology/thread_siblings_list could be read";
    return f;
  }
  if (shared.empty()) {
    f.verdict = Verdict::kPass;
    f.summary = StrCat("SMT off: ", read, " logical CPUs, one per core");
    f.evidence.push_back(
        StrCat(CpuDir(online.front()), "/topology/thread_siblings_list: ", online.front()));
    return f;
  }
  f.verdict = Verdict::kWarn;
  f.summary = StrCat("SMT on: ", shared.size(), " of ", read,
                     " logical CPUs share their core with a sibling");
  AddCapped(std::move(shared), &f.evidence);
  f.change = StrCat(
      "turn SMT off (echo off > /sys/devices/system/cpu/smt/control, or `nosmt` on the kernel "
      "command line), or pin instances to one sibling per core: instance_group cpus: [",
      FormatCpuList(std::vector<int>(one_per_core.begin(), one_per_core.end())), "]");
  return f;
}

Finding CheckCpufreq(const HostFiles& host) {
  Finding f;
  f.check = "cpufreq";
  std::map<std::string, std::vector<int>> by_governor;
  Verdict worst = Verdict::kPass;
  std::vector<std::string> capped;
  std::string driver;
  for (const int cpu : OnlineCpus(host, nullptr)) {
    const std::string dir = StrCat(CpuDir(cpu), "/cpufreq");
    absl::StatusOr<std::string> governor = host.ReadLine(StrCat(dir, "/scaling_governor"));
    if (!governor.ok()) continue;
    by_governor[*governor].push_back(cpu);
    driver = host.ReadLine(StrCat(dir, "/scaling_driver")).value_or("");
    Verdict verdict = Verdict::kWarn;
    if (*governor == "performance") {
      verdict = Verdict::kPass;
    } else if (*governor == "powersave") {
      // intel_pstate and amd-pstate-epp keep scaling under `powersave` (it only biases their
      // choice); acpi-cpufreq and the others pin the lowest frequency under it.
      const bool scales = driver.starts_with("intel_pstate") || driver == "amd-pstate-epp";
      verdict = scales ? Verdict::kWarn : Verdict::kFail;
    }
    int64_t max_khz = 0;
    int64_t hw_max_khz = 0;
    if (ParseInteger(host.ReadLine(StrCat(dir, "/scaling_max_freq")).value_or(""), &max_khz) &&
        ParseInteger(host.ReadLine(StrCat(dir, "/cpuinfo_max_freq")).value_or(""), &hw_max_khz) &&
        max_khz < hw_max_khz) {
      capped.push_back(
          StrCat(dir, "/scaling_max_freq: ", max_khz, " (cpuinfo_max_freq ", hw_max_khz, ")"));
      verdict = std::max(verdict, Verdict::kWarn);
    }
    if (by_governor.size() == 1 && by_governor.begin()->second.size() == 1) {
      f.evidence.push_back(StrCat(dir, "/scaling_driver: ", driver.empty() ? "?" : driver));
      int64_t cur_khz = 0;
      if (ParseInteger(host.ReadLine(StrCat(dir, "/scaling_cur_freq")).value_or(""), &cur_khz)) {
        f.evidence.push_back(StrCat(dir, "/scaling_cur_freq: ", cur_khz, " (", Ghz(cur_khz),
                                    hw_max_khz > 0 ? StrCat(" of ", Ghz(hw_max_khz)) : "", ")"));
      }
    }
    worst = std::max(worst, verdict);
  }
  if (by_governor.empty()) {
    f.verdict = Verdict::kUnknown;
    f.summary =
        "no cpufreq on this host: the hypervisor or the firmware sets the frequency (check the "
        "BIOS power profile: maximum performance)";
    f.evidence.push_back(StrCat(CpuDir(0), "/cpufreq: missing"));
    return f;
  }
  std::string governors;
  for (const auto& [governor, cpus] : by_governor) {
    f.evidence.push_back(StrCat("scaling_governor ", governor, ": cpus ", FormatCpuList(cpus)));
    governors += StrCat(governors.empty() ? "" : ", ", governor, " on ", cpus.size());
  }
  AddCapped(std::move(capped), &f.evidence);
  f.verdict = worst;
  f.summary = StrCat("governor ", governors, " CPU(s), driver ", driver.empty() ? "?" : driver);
  if (worst != Verdict::kPass) {
    f.change =
        "set the performance governor (cpupower frequency-set -g performance, or echo performance "
        "| tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor) and lift scaling_max_freq";
  }
  return f;
}

Finding CheckIsa(const HostFiles& host, const std::optional<EngineIsa>& engine) {
  Finding f;
  f.check = "isa";
  absl::StatusOr<CpuFlags> read = ReadCpuFlags(host);
  if (!read.ok()) {
    f.summary = "cannot read the CPU's flags";
    f.evidence.emplace_back(read.status().message());
    return f;
  }
  const CpuFlags& flags = *read;
  if (flags.empty()) {
    f.summary = "/proc/cpuinfo has no x86 `flags` line: not an x86 CPU, the checks below are x86's";
    return f;
  }
  std::string present;
  std::string missing;
  for (const std::string_view flag : {"avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16",
                                      "amx_tile", "amx_int8", "amx_bf16"}) {
    (flags.contains(flag) ? present : missing) += StrCat(" ", flag);
  }
  f.evidence.push_back(
      StrCat("/proc/cpuinfo flags:", present.empty() ? " (none of these)" : present,
             missing.empty() ? "" : StrCat("; missing:", missing)));
  std::string_view best = "none";
  for (const IsaLevel& level : IsaLevels()) {
    if (std::all_of(level.flags.begin(), level.flags.end(),
                    [&](std::string_view flag) { return flags.contains(flag); })) {
      best = level.name;
    }
  }
  const bool vnni = flags.contains("avx512_vnni") || flags.contains("avx_vnni");
  if (engine.has_value()) {
    f.evidence.push_back(
        StrCat("engine (oneDNN's effective ISA): ", engine->name,
               "; int8 kernels exact (VNNI): ", engine->int8_exact ? "yes" : "no"));
  } else {
    f.evidence.emplace_back(
        "engine: not compared (--root names another host, or no ONNX engine in this build)");
  }
  if (!flags.contains("avx2")) {
    f.verdict = Verdict::kFail;
    f.summary = StrCat("no AVX2 (best: ", best, "): the engine's kernels fall back to SSE");
    f.change = "run on a CPU with AVX2 (x86-64-v3) at least";
    return f;
  }
  f.summary = StrCat("CPU offers ", best);
  f.verdict = Verdict::kPass;
  if (engine.has_value() && IsaRank(engine->name) < IsaRank(best)) {
    f.verdict = Verdict::kWarn;
    f.summary += StrCat(", the engine uses only ", engine->name);
    f.change =
        "unset DNNL_MAX_CPU_ISA / ONEDNN_MAX_CPU_ISA if set; otherwise this oneDNN predates the "
        "CPU's instructions";
  } else if (engine.has_value()) {
    f.summary += StrCat(", the engine uses ", engine->name);
  }
  if (!vnni) {
    f.verdict = Verdict::kWarn;
    f.summary += "; no VNNI: int8 (QDQ) models run their float path";
    if (f.change.empty()) f.change = "for int8 models, a CPU with VNNI (avx512_vnni or avx_vnni)";
  }
  return f;
}

Finding CheckNuma(const HostFiles& host, const DoctorInputs& inputs) {
  Finding f;
  f.check = "numa";
  std::map<int, int> node_of;  // cpu -> node
  int nodes = 0;
  for (const std::string& name : host.List("/sys/devices/system/node")) {
    int node = 0;
    if (!name.starts_with("node") || !ParseInteger(std::string_view(name).substr(4), &node)) {
      continue;
    }
    const std::string file = StrCat("/sys/devices/system/node/", name, "/cpulist");
    absl::StatusOr<std::string> line = host.ReadLine(file);
    if (!line.ok()) continue;
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(*line);
    if (!cpus.ok()) continue;
    ++nodes;
    f.evidence.push_back(StrCat(file, ": ", *line));
    for (const int cpu : *cpus) node_of[cpu] = node;
  }
  if (nodes <= 1) {
    f.verdict = Verdict::kPass;
    f.summary = nodes == 0 ? "no NUMA nodes in sysfs: one memory domain" : "one NUMA node";
    if (nodes == 0) f.evidence.emplace_back("/sys/devices/system/node: no node* with a cpulist");
  } else {
    f.summary = StrCat(nodes, " NUMA nodes");
  }
  if (!inputs.models.has_value() || !inputs.place || !inputs.pin_threads) {
    if (nodes > 1) {
      f.verdict = Verdict::kWarn;
      f.summary += inputs.pin_threads ? ": pass --model-repository to check where instances go"
                                      : ": --pin-threads false leaves placement to the kernel";
      f.change =
          "pin each instance inside one node (instance_group cpus from one node's cpulist), or "
          "run one server per node under numactl --cpunodebind=N --membind=N";
    }
    return f;
  }
  const std::vector<int> available = AvailableCpus(host, nullptr);
  if (available.empty()) return f;
  std::map<int, std::set<std::string>> models_on;  // cpu -> models with an instance on it
  std::vector<std::string> placed;
  std::vector<std::string> spanning;
  for (const ModelPlan& model : *inputs.models) {
    if (!model.compute_threads) continue;
    const int threads = ThreadsPerInstance(model, static_cast<int>(available.size()));
    const std::vector<int>& cpus = model.cpus.empty() ? available : model.cpus;
    for (int i = 0; i < model.instances; ++i) {
      std::vector<int> on = inputs.place(i, threads, cpus);
      std::sort(on.begin(), on.end());
      on.erase(std::unique(on.begin(), on.end()), on.end());
      std::set<int> touched;
      for (const int cpu : on) {
        models_on[cpu].insert(model.name);
        if (node_of.contains(cpu)) touched.insert(node_of[cpu]);
      }
      std::string where;
      for (const int node : touched) where += StrCat(where.empty() ? "node " : ",", node);
      const std::string line =
          StrCat("model '", model.name, "' instance ", i, ": cpus ", FormatCpuList(on),
                 where.empty() ? "" : StrCat(" (", where, ")"));
      if (touched.size() > 1) spanning.push_back(line);
      placed.push_back(line);
    }
  }
  std::vector<int> shared;
  for (const auto& [cpu, models] : models_on) {
    if (models.size() > 1) shared.push_back(cpu);
  }
  AddCapped(std::move(placed), &f.evidence);
  if (!spanning.empty()) {
    f.verdict = Verdict::kWarn;
    f.summary += StrCat(": ", spanning.size(), " instance(s) span nodes");
    f.change = "give each instance cores of one node (instance_group cpus, intra_op_threads)";
  }
  if (!shared.empty()) {
    f.verdict = Verdict::kWarn;
    f.summary += StrCat("; cores ", FormatCpuList(shared), " are pinned by several models");
    if (f.change.empty()) {
      f.change =
          "every model places its instances from the first core of its list: give each model "
          "its own instance_group cpus";
    }
  }
  if (spanning.empty() && shared.empty()) {
    f.verdict = Verdict::kPass;
    f.summary += ", every instance inside one node, no core shared between models";
  }
  return f;
}

Finding CheckThreads(const HostFiles& host, const DoctorInputs& inputs) {
  Finding f;
  f.check = "threads";
  const std::vector<int> available = AvailableCpus(host, &f.evidence);
  if (!inputs.models.has_value()) {
    f.summary = "no --model-repository: compute threads not counted";
    return f;
  }
  const int cores = static_cast<int>(available.size());
  int64_t total = 0;
  int defaulted = 0;
  std::vector<std::string> lines;
  std::vector<std::string> others;
  for (const ModelPlan& model : *inputs.models) {
    if (model.instances == 0) continue;
    const int threads = ThreadsPerInstance(model, cores);
    total += int64_t{model.instances} * threads;
    if (model.compute_threads && model.intra_op_threads == 0) ++defaulted;
    const std::string why = !model.compute_threads ? " (no compute pool)"
                            : model.intra_op_threads > 0
                                ? " (intra_op_threads)"
                                : StrCat(" (default: ", cores, " cores / ", model.instances, ")");
    const std::string line =
        StrCat("model '", model.name, "' (", model.backend.empty() ? "?" : model.backend,
               "): ", model.instances, " instance(s) x ", threads, " thread(s)", why);
    (model.compute_threads ? lines : others).push_back(line);
  }
  // The models that ask for cores come first: they are what the count is about.
  lines.insert(lines.end(), others.begin(), others.end());
  AddCapped(std::move(lines), &f.evidence);
  f.summary = StrCat(total, " compute thread(s) over ", inputs.models->size(), " model(s) in ",
                     inputs.repository, " on ", cores, " core(s)");
  if (total <= cores) {
    f.verdict = Verdict::kPass;
    return f;
  }
  f.verdict = total <= 2 * int64_t{cores} ? Verdict::kWarn : Verdict::kFail;
  f.summary +=
      StrCat(": oversubscribed ", fmt::format("{:.1f}", static_cast<double>(total) / cores),
             "x when the models are busy together");
  f.change = StrCat(
      "set instance_group intra_op_threads so that instances x threads, summed over "
      "the models, is at most ",
      cores,
      defaulted > 1 ? " (each model's default takes every core, so the defaults add up)" : "");
  return f;
}

Finding CheckCpuQuota(const HostFiles& host, const DoctorInputs& inputs) {
  Finding f;
  f.check = "cpu_quota";
  const CgroupCpu cgroup = ReadCgroupCpu(host);
  f.evidence = cgroup.evidence;
  if (!cgroup.known) {
    f.summary = "cannot tell the cgroup";
    return f;
  }
  if (!cgroup.quota_cpus.has_value()) {
    f.verdict = Verdict::kPass;
    f.summary = "no CPU quota (CFS bandwidth unlimited)";
    return f;
  }
  const double quota = *cgroup.quota_cpus;
  const int cores = static_cast<int>(AvailableCpus(host, nullptr).size());
  const std::string allowed = fmt::format("{:.2f}", quota);
  const int64_t usable = std::max<int64_t>(1, static_cast<int64_t>(std::floor(quota)));
  if (inputs.models.has_value()) {
    int64_t total = 0;
    for (const ModelPlan& model : *inputs.models) {
      total += int64_t{model.instances} * ThreadsPerInstance(model, cores);
    }
    f.summary = StrCat("CPU quota ", allowed, " CPUs for ", total, " compute thread(s)");
    if (static_cast<double>(total) <= quota) {
      f.verdict = Verdict::kPass;
      return f;
    }
    f.verdict = Verdict::kFail;
    f.summary += ": the kernel throttles the process for the rest of each period";
  } else {
    f.summary = StrCat("CPU quota ", allowed, " CPUs on ", cores, " core(s)");
    if (quota >= cores) {
      f.verdict = Verdict::kPass;
      return f;
    }
    f.verdict = Verdict::kWarn;
    f.summary += ": the default thread count (cores / instances) ignores the quota";
  }
  f.change = StrCat("set intra_op_threads so that instances x threads is at most ", usable,
                    ", or raise the quota (Kubernetes: resources.limits.cpu)");
  return f;
}

}  // namespace brigade::doctor
