// `brigade doctor`: the host-tuning checklist as a command. It reads the host (or, with --root, a
// copy of another host's /proc and /sys) and the serving configuration (--model-repository,
// --max-connections, --pin-threads), and prints each check's verdict with its evidence and what
// to change (tools/doctor/checks.h says what each check passes, warns and fails). Exit status:
// 1 when a check fails, 2 when the repository cannot be read, else 0.
//
// The checks themselves are pure functions over the root folder; this verb adds what only the
// binary knows: the ISA the ONNX engine's kernels run with, the scheduler's placement rule, and
// the alignments of the buffers tensors live in.

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "core/strings.h"
#include "core/tensor.h"
#include "protocol/http/body_buffer.h"
#include "scheduler/cpu_affinity.h"
#include "tools/command.h"
#include "tools/doctor/checks.h"
#include "tools/doctor/report.h"
#include "tools/doctor/repository_plan.h"
#if BRIGADE_HAVE_ONNX
#include "engine/onnx/exec/memory_planner.h"
#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/kernels/qlinear_dnnl.h"
#endif

namespace brigade::tools {
namespace {

struct DoctorFlags {
  std::string root = "/";
  std::string model_repository;
  int max_connections = 1024;
  bool pin_threads = true;
  bool json = false;
};

int RunDoctorCommand(const DoctorFlags& flags) {
  const doctor::HostFiles host(flags.root);
  doctor::DoctorInputs inputs;
  inputs.max_connections = flags.max_connections;
  inputs.pin_threads = flags.pin_threads;
  inputs.place = [](int index, int threads, const std::vector<int>& cpus) {
    return scheduler::InstanceCpus(index, threads, cpus);
  };
  if (!flags.model_repository.empty()) {
    absl::StatusOr<std::vector<doctor::ModelPlan>> models =
        doctor::ReadRepositoryPlan(flags.model_repository);
    if (!models.ok()) {
      std::fputs(StrCat("brigade doctor: ", models.status().message(), "\n").c_str(), stderr);
      return 2;
    }
    inputs.models = *std::move(models);
    inputs.repository = flags.model_repository;
  }
  inputs.alignment =
      doctor::TensorAlignment{kTensorAlignment, 0, protocol::http::BodyBuffer::kAlignment};
#if BRIGADE_HAVE_ONNX
  inputs.alignment->arena_bytes = engine::onnx::kArenaAlignment;
  // The engine's ISA is this process's; it says nothing about another host's files.
  if (host.is_live_host()) {
    inputs.engine = doctor::EngineIsa{std::string(engine::onnx::DnnlCpuIsaName()),
                                      engine::onnx::DnnlInt8IsExact()};
  }
#endif
  const std::vector<doctor::Finding> findings = doctor::RunChecks(host, inputs);
  const std::string report = flags.json ? doctor::FormatJson(flags.root, findings)
                                        : doctor::FormatText(flags.root, findings);
  std::fputs(report.c_str(), stdout);
  return doctor::ExitStatus(findings);
}

}  // namespace

void RegisterDoctorCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<DoctorFlags>();
  CLI::App* doctor = app.add_subcommand(
      "doctor",
      "Check the host's tuning for serving (SMT, governor, ISA, NUMA, threads, CPU quota, BLAS, "
      "huge pages, open files, tensor alignment); exit 1 when a check fails");
  doctor
      ->add_option("--root", flags->root, "Folder standing for / (a copy of a host's /proc, /sys)")
      ->capture_default_str();
  doctor->add_option("--model-repository", flags->model_repository,
                     "Count the instances and compute threads its models ask for");
  doctor
      ->add_option("--max-connections", flags->max_connections,
                   "Connections the server must hold open at once (against the open-files limit)")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  doctor->add_option("--pin-threads", flags->pin_threads, "As `brigade serve --pin-threads`")
      ->capture_default_str();
  doctor->add_flag("--json", flags->json, "Print one JSON object instead of text");
  doctor->callback([flags, exit_code] { *exit_code = RunDoctorCommand(*flags); });
}

const CommandRegistration kDoctorRegistration(50, RegisterDoctorCommand);

}  // namespace brigade::tools
