#include "engine/torch/torch_backend.h"

#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "ATen/Parallel.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/torch/blas_threads.h"
#include "engine/torch/heap_retention.h"
#include "engine/torch/torch_error.h"
#include "engine/torch/torch_model.h"
#include "engine/torch/torch_signature.h"
#include "spdlog/spdlog.h"
#include "torch/script.h"
#include "torch/version.h"

namespace brigade::engine {
namespace {

void ConfigureProcessOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::string inter_op = "1 inter-op thread";
    try {
      at::set_num_interop_threads(1);
    } catch (const std::exception&) {
      // The pool was already sized (by the embedding process, or by work that started it);
      // libtorch then keeps what it has.
      inter_op = StrCat(at::get_num_interop_threads(), " inter-op thread(s), set before Brigade");
    }
    spdlog::info("TorchScript backend: libtorch {}, {}; {}; {}", TORCH_VERSION, inter_op,
                 LimitOpenBlasThreadsOnce(), RetainFreedHeapOnce());
  });
}

absl::Status FileError(absl::StatusCode code, const ModelLoadOptions& options,
                       std::string_view message) {
  return absl::Status(
      code, StrCat("model '", options.model_name, "': ", options.model_path, ": ", message));
}

}  // namespace

absl::StatusOr<std::shared_ptr<Model>> TorchBackend::Load(const ModelLoadOptions& options) {
  std::error_code error;
  const std::filesystem::file_status file = std::filesystem::status(options.model_path, error);
  if (!std::filesystem::exists(file)) {
    return FileError(absl::StatusCode::kNotFound, options, "TorchScript model file not found");
  }
  if (!std::filesystem::is_regular_file(file)) {
    return FileError(absl::StatusCode::kInvalidArgument, options, "not a regular file");
  }
  ConfigureProcessOnce();

  torch::jit::ExtraFilesMap extra_files{{std::string(kTorchSignatureFile), std::string()}};
  torch::jit::Module module;
  try {
    module = torch::jit::load(options.model_path, torch::kCPU, extra_files);
    module.eval();
  } catch (const std::exception& e) {
    return FileError(absl::StatusCode::kInvalidArgument, options,
                     StrCat("not a loadable TorchScript module (save it with torch.jit.save or "
                            "ScriptModule.save; torch.save output is not TorchScript): ",
                            DescribeTorchException(e)));
  }

  std::optional<ModelSignature> embedded;
  const std::string& signature_json = extra_files[std::string(kTorchSignatureFile)];
  const bool needs_embedded = options.declared_inputs.empty() || options.declared_outputs.empty();
  if (needs_embedded && !signature_json.empty()) {
    absl::StatusOr<ModelSignature> parsed = ParseTorchSignatureJson(signature_json);
    if (!parsed.ok()) {
      return FileError(absl::StatusCode::kInvalidArgument, options,
                       StrCat(kTorchSignatureFile, ": ", parsed.status().message()));
    }
    embedded = *std::move(parsed);
  }
  BRIGADE_ASSIGN_OR_RETURN(ModelSignature signature,
                           ResolveTorchSignature(options, embedded ? &*embedded : nullptr));
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<TorchModel> model,
                           TorchModel::Create(options, std::move(module), std::move(signature)));
  return model;
}

}  // namespace brigade::engine
