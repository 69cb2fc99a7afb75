#ifndef BRIGADE_ENGINE_BACKEND_H_
#define BRIGADE_ENGINE_BACKEND_H_

// Backend: turns a model file into a Model. BackendRegistry: finds the backend for a config's
// `platform` / `backend` strings, using Triton's names so existing configs load unchanged:
//
//   platform "pytorch_libtorch"  or backend "pytorch"      → TorchScript (model.pt)
//   platform "onnxruntime_onnx"  or backend "onnxruntime"  → Brigade's ONNX engine (model.onnx)
//
// Thread safety: Backend::Load may be called concurrently for different models. The registry is
// filled at start-up and read-only afterwards (Find is then safe from any thread).
// Failure: Load returns INVALID_ARGUMENT for a malformed or unsupported model (naming the file and
// what is wrong), NOT_FOUND for a missing file, UNIMPLEMENTED for unsupported features.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/model.h"

namespace brigade::engine {

class Backend {
 public:
  virtual ~Backend() = default;

  // Triton backend name ("pytorch", "onnxruntime").
  virtual std::string_view name() const = 0;
  // Triton platform name ("pytorch_libtorch", "onnxruntime_onnx").
  virtual std::string_view platform() const = 0;
  // File looked for in a version directory when the config names none ("model.pt").
  virtual std::string_view default_model_filename() const = 0;

  virtual absl::StatusOr<std::shared_ptr<Model>> Load(const ModelLoadOptions& options) = 0;
};

class BackendRegistry {
 public:
  void Register(std::unique_ptr<Backend> backend);

  // Finds by `backend` name first, then by `platform`; either may be empty. NOT_FOUND names what
  // was asked for and lists what is available.
  absl::StatusOr<Backend*> Find(std::string_view platform, std::string_view backend) const;

  // Finds the backend whose default file exists in `version_dir`, for configs that name neither
  // platform nor backend (Triton's auto-complete). Null when none matches.
  Backend* FindByModelFile(const std::string& version_dir) const;

  std::vector<std::string_view> names() const;

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_BACKEND_H_
