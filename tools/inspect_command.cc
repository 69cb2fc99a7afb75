// `brigade inspect MODEL.onnx`: what an ONNX model is and what Brigade's engine makes of it —
// inputs/outputs, parameters, the op histogram before and after optimization, the node count
// after each graph pass, and the FLOPs, arena and packed weights of one run. The text comes from
// engine/onnx/inspect.h; this verb only parses flags, prints, and turns an error into a message
// naming the file and a non-zero exit status.

#include <cstdio>
#include <memory>
#include <string>

#include "core/strings.h"
#include "tools/command.h"
#if BRIGADE_HAVE_ONNX
#include "engine/onnx/inspect.h"
#endif

namespace brigade::tools {
namespace {

struct InspectFlags {
  std::string model;
  int batch = 1;
  bool no_optimize = false;
};

int RunInspectCommand(const InspectFlags& flags) {
#if !BRIGADE_HAVE_ONNX
  (void)flags;
  std::fputs(
      "brigade inspect: this brigade was built without the ONNX engine "
      "(-DBRIGADE_WITH_ONNX=ON)\n",
      stderr);
  return 1;
#else
  engine::onnx::InspectOptions options;
  options.batch = flags.batch;
  options.optimize = !flags.no_optimize;
  const absl::StatusOr<std::string> text = engine::onnx::InspectOnnxModel(flags.model, options);
  if (!text.ok()) {
    // The loader names the file when it cannot read it, not when the bytes are not a model.
    const std::string reason(text.status().message());
    const std::string message = reason.find(flags.model) != std::string::npos
                                    ? StrCat("brigade inspect: ", reason, "\n")
                                    : StrCat("brigade inspect: ", flags.model, ": ", reason, "\n");
    std::fputs(message.c_str(), stderr);
    return 1;
  }
  std::fputs(text->c_str(), stdout);
  return 0;
#endif
}

}  // namespace

void RegisterInspectCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* inspect = app.add_subcommand(
      "inspect",
      "Describe an ONNX model: ops, parameters, node count after each graph pass, FLOPs");
  inspect->add_option("model", flags->model, "The .onnx file")->required();
  inspect
      ->add_option("-b,--batch", flags->batch,
                   "Batch size for the plan section (variable first dimensions take it)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  inspect->add_flag("--no-optimize", flags->no_optimize,
                    "Skip the graph passes (describe the model as loaded)");
  inspect->callback([flags, exit_code] { *exit_code = RunInspectCommand(*flags); });
}

const CommandRegistration kInspectRegistration(30, RegisterInspectCommand);

}  // namespace brigade::tools
