#ifndef BRIGADE_TOOLS_DOCTOR_CHECKS_H_
#define BRIGADE_TOOLS_DOCTOR_CHECKS_H_

// The checks of `brigade doctor`: the host-tuning checklist, each a pure function of the host's
// files (HostFiles, so fixtures stand in for /proc and /sys) and the serving configuration
// (DoctorInputs). Each answers a Finding: a verdict, one line saying what it found, the evidence
// (the files and values it read, "path: value"), and what to change.
//
// Verdicts, per check (a failing check makes the command exit non-zero; warn does not):
//   smt        pass: one logical CPU per core.  warn: SMT siblings online (compute threads on
//              two siblings share one core's vector units).
//   cpufreq    pass: governor `performance` on every CPU, or no cpufreq (the hypervisor or the
//              firmware sets the frequency: unknown).  warn: a dynamic governor (schedutil,
//              ondemand, conservative; powersave under intel_pstate/amd-pstate, which still
//              scales), or scaling_max_freq below cpuinfo_max_freq.  fail: `powersave` under a
//              driver where it pins the lowest frequency, or `userspace`.
//   isa        pass: AVX2 and VNNI present and the engine uses what the CPU has.  warn: no
//              VNNI (int8 models run in float), or the engine uses less than the CPU offers
//              (DNNL_MAX_CPU_ISA, or a oneDNN older than the CPU).  fail: no AVX2.
//   numa       pass: one node, or every instance's cores inside one node and no core shared by
//              two models' instances.  warn: several nodes and no repository to place, an
//              instance spanning nodes, or cores shared between models (every model places
//              its instances from the first core of the list, so two models overlap).
//   threads    pass: compute threads (instances x threads, over all models) <= cores.
//              warn: up to 2x the cores.  fail: more than 2x.  unknown: no --model-repository.
//   cpu_quota  pass: no CFS quota, or a quota of at least the compute threads.  warn: a quota
//              below the cores and no repository (the default thread count ignores the
//              quota).  fail: a quota below the compute threads (the kernel throttles the
//              whole process for the rest of each period: latency spikes of up to a period).
//   blas       pass: libblas.so.3 resolves to an optimized BLAS (OpenBLAS, BLIS, MKL, ATLAS).
//              fail: the reference BLAS (Debian's libblas3), ~40x slower on libtorch's GEMMs.
//              warn: an unrecognised library.  unknown: no libblas.so.3 (no libtorch).
//   thp        pass: enabled `always` and defrag not `always`.  warn: `madvise` (Brigade does
//              not madvise its tensors, so they get 4 KiB pages), `never`, or defrag `always`
//              (allocations stall on compaction).
//   nofile     pass: the soft open-files limit covers --max-connections plus kReservedFiles.
//              fail: it does not (accept() fails with EMFILE once it is reached).
//   alignment  pass: every tensor buffer the binary allocates (owned tensors, the engine's
//              arenas, request bodies that binary tensors borrow) is aligned to at least the
//              CPU's widest vector (64 bytes with AVX-512, 32 with AVX).  warn: one is not (each
//              vector load then spans two cache lines).  unknown: no alignments given.
// A file a check needs but cannot read makes it `unknown`, with the error as its evidence.
//
// Thread safety: pure functions. Failure: none; unreadable input is a finding, never an error.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/doctor/host_files.h"

namespace brigade::doctor {

enum class Verdict { kPass, kWarn, kFail, kUnknown };
std::string_view VerdictName(Verdict verdict);

struct Finding {
  std::string check;
  Verdict verdict = Verdict::kUnknown;
  std::string summary;
  std::vector<std::string> evidence;
  // What to change; empty when nothing needs to.
  std::string change;
};

// The instruction set the ONNX engine's kernels use, from the binary itself (oneDNN's
// effective ISA), which no file of the host says.
struct EngineIsa {
  std::string name;  // oneDNN's name: "avx2", "avx512_core_vnni", ...
  bool int8_exact = false;
};

// One model of the repository as the server would run it.
struct ModelPlan {
  std::string name;
  std::string backend;  // platform or backend, "" when the config names neither
  // Instances the model runs: the sum of its instance groups' counts (a count of 0 is 1); 0 for
  // an ensemble, which runs none of its own.
  int instances = 0;
  // intra_op_threads of the first group that sets it; 0: cores / instances (at least 1).
  int intra_op_threads = 0;
  // cpus of the first group that sets them; empty: every available core.
  std::vector<int> cpus;
  // Whether the backend runs a pool of intra-op compute threads per instance (the ONNX engine,
  // libtorch; also assumed when the config names no backend). The others (builtin, process
  // steps) compute on the instance's own thread, so they count one thread and are not placed.
  bool compute_threads = true;
};

// Where instance `index` of a model with `threads` threads per instance is pinned, given the
// model's cpus (never empty here): the scheduler's placement, injected so the checks use the
// server's own rule.
using PlaceInstance =
    std::function<std::vector<int>(int index, int threads, const std::vector<int>& cpus)>;

// The byte alignments of the buffers tensors live in, from the binary (not from the host).
struct TensorAlignment {
  size_t owned_bytes = 0;  // Tensor::Allocate
  size_t arena_bytes = 0;  // the ONNX engine's per-run arenas; 0 without the engine
  size_t body_bytes = 0;   // HTTP bodies, which binary-extension tensors borrow
};

// File descriptors the server holds besides connections: listeners, model files, logs.
inline constexpr int kReservedFiles = 64;

struct DoctorInputs {
  // The repository's models; unset without --model-repository.
  std::optional<std::vector<ModelPlan>> models;
  std::string repository;
  // Unset when the host is not this one (--root) or the engine is not built in.
  std::optional<EngineIsa> engine;
  std::optional<TensorAlignment> alignment;
  int max_connections = 1024;
  bool pin_threads = true;
  PlaceInstance place;
};

// Cores the server's threads may run on: the online CPUs, narrowed by the cgroup's cpuset when
// it has one. Evidence lines are appended to `evidence` when it is not null.
std::vector<int> AvailableCpus(const HostFiles& host, std::vector<std::string>* evidence);
// Compute threads per instance of `model` on `available_cpus` cores: the scheduler's choice for
// a backend with compute threads, else 1.
int ThreadsPerInstance(const ModelPlan& model, int available_cpus);

Finding CheckSmt(const HostFiles& host);
Finding CheckCpufreq(const HostFiles& host);
Finding CheckIsa(const HostFiles& host, const std::optional<EngineIsa>& engine);
Finding CheckNuma(const HostFiles& host, const DoctorInputs& inputs);
Finding CheckThreads(const HostFiles& host, const DoctorInputs& inputs);
Finding CheckCpuQuota(const HostFiles& host, const DoctorInputs& inputs);
Finding CheckBlas(const HostFiles& host);
Finding CheckThp(const HostFiles& host);
Finding CheckOpenFiles(const HostFiles& host, const DoctorInputs& inputs);
Finding CheckAlignment(const HostFiles& host, const std::optional<TensorAlignment>& alignment);

// Every check, in the order above.
std::vector<Finding> RunChecks(const HostFiles& host, const DoctorInputs& inputs);

}  // namespace brigade::doctor

#endif  // BRIGADE_TOOLS_DOCTOR_CHECKS_H_
