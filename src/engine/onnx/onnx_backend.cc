#include "engine/onnx/onnx_backend.h"

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/planner.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/passes/optimizer.h"
#include "spdlog/spdlog.h"

namespace brigade::engine {
namespace {

using onnx::CompiledModel;
using onnx::Session;

// Per signature input: the initializer a request that omits it runs with (empty: required).
using InputDefaults = std::vector<Tensor>;

class OnnxInstance final : public ModelInstance {
 public:
  OnnxInstance(std::unique_ptr<Session> session, std::shared_ptr<const InputDefaults> defaults)
      : session_(std::move(session)), defaults_(std::move(defaults)) {}

  absl::Status Execute(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) override {
    bool omitted = false;
    for (const Tensor& input : inputs) omitted |= input.empty();
    if (!omitted) return session_->Run(inputs, outputs);
    // Omitted optional inputs run with their initializer (a shared view, no copy).
    std::vector<Tensor> filled(inputs.begin(), inputs.end());
    for (size_t i = 0; i < filled.size() && i < defaults_->size(); ++i) {
      if (filled[i].empty()) filled[i] = (*defaults_)[i];
    }
    return session_->Run(filled, outputs);
  }

  // Session::Run sets the OpenMP thread count of the calling thread on every call, and its
  // buffers and primitives belong to the session, not to a thread. (A caller other than the
  // instance thread gets its own OpenMP team when threads > 1.)
  bool RunsOnAnyThread() const override { return true; }

 private:
  std::unique_ptr<Session> session_;
  std::shared_ptr<const InputDefaults> defaults_;
};

class OnnxModel final : public Model {
 public:
  OnnxModel(std::shared_ptr<const CompiledModel> compiled, ModelSignature signature,
            std::shared_ptr<const InputDefaults> defaults)
      : compiled_(std::move(compiled)),
        signature_(std::move(signature)),
        defaults_(std::move(defaults)) {}

  const ModelSignature& signature() const override { return signature_; }

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(
      const InstanceOptions& options) override {
    Session::Options session_options;
    session_options.threads =
        options.intra_op_threads > 0
            ? options.intra_op_threads
            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                             Session::Create(compiled_, session_options));
    return std::make_unique<OnnxInstance>(std::move(session), defaults_);
  }

 private:
  const std::shared_ptr<const CompiledModel> compiled_;
  const ModelSignature signature_;
  const std::shared_ptr<const InputDefaults> defaults_;
};

TensorSpec SpecOf(const onnx::Value& value) {
  TensorSpec spec;
  spec.name = value.name;
  spec.dtype = value.dtype;
  if (value.shape.has_value()) spec.shape = *value.shape;
  return spec;
}

// Merges the model's own specs with the config's declarations.
absl::StatusOr<std::vector<TensorSpec>> MergeSpecs(const ModelLoadOptions& options,
                                                   std::vector<TensorSpec> model_specs,
                                                   const std::vector<TensorSpec>& declared,
                                                   std::string_view kind) {
  for (const TensorSpec& d : declared) {
    const TensorSpec* found = nullptr;
    for (const TensorSpec& m : model_specs) {
      if (m.name == d.name) found = &m;
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(StrCat("model '", options.model_name, "': config declares ",
                                               kind, " '", d.name,
                                               "' which the model does not have"));
    }
    if (d.dtype != DataType::kInvalid && d.dtype != found->dtype) {
      return absl::InvalidArgumentError(StrCat("model '", options.model_name, "': config declares ",
                                               kind, " '", d.name, "' as ", DataTypeName(d.dtype),
                                               " but the model has ", DataTypeName(found->dtype)));
    }
    if (!d.shape.empty() && !found->shape.empty()) {
      bool ok = d.shape.size() == found->shape.size();
      for (size_t i = 0; ok && i < d.shape.size(); ++i) {
        ok = d.shape[i] < 0 || found->shape[i] < 0 || d.shape[i] == found->shape[i];
      }
      if (!ok) {
        return absl::InvalidArgumentError(StrCat(
            "model '", options.model_name, "': config shape ", ShapeToString(d.shape), " of ", kind,
            " '", d.name, "' contradicts the model's ", ShapeToString(found->shape)));
      }
    }
  }
  if (options.max_batch_size > 0) {
    for (TensorSpec& m : model_specs) {
      if (m.shape.empty()) continue;
      if (m.shape[0] > 0 && m.shape[0] != 1) {
        return absl::InvalidArgumentError(StrCat("model '", options.model_name, "': ", kind, " '",
                                                 m.name, "' has a fixed first dimension ",
                                                 m.shape[0], ", so it cannot be batched"));
      }
      m.shape[0] = -1;
    }
  }
  return model_specs;
}

// Aligns the initializer defaults with the signature's inputs, marks those inputs optional, and
// refuses a config-optional input that has no initializer to default to.
absl::StatusOr<InputDefaults> TakeInputDefaults(const ModelLoadOptions& options,
                                                std::map<std::string, Tensor> by_name,
                                                ModelSignature* signature) {
  for (const TensorSpec& declared : options.declared_inputs) {
    if (declared.optional && !by_name.contains(declared.name)) {
      return absl::InvalidArgumentError(
          StrCat("model '", options.model_name, "': input '", declared.name,
                 "' is optional in config, but the ONNX graph has no initializer named '",
                 declared.name, "' to run with when a request omits it"));
    }
  }
  InputDefaults defaults(signature->inputs.size());
  for (size_t i = 0; i < signature->inputs.size(); ++i) {
    auto it = by_name.find(signature->inputs[i].name);
    if (it == by_name.end()) continue;
    signature->inputs[i].optional = true;
    defaults[i] = std::move(it->second);
  }
  return defaults;
}

// The precision asked for: the config's `precision` parameter, else the file's metadata
// (kPrecisionMetadataKey), else fp32.
absl::StatusOr<CompiledModel::Options> CompileOptionsFor(
    const ModelLoadOptions& options, const std::map<std::string, std::string>& metadata) {
  std::string_view source = "parameter 'precision'";
  auto it = options.parameters.find("precision");
  if (it == options.parameters.end()) {
    it = metadata.find(std::string(onnx::kPrecisionMetadataKey));
    if (it == metadata.end()) return CompiledModel::Options{};
    source = "model metadata 'brigade.precision'";
  }
  const std::optional<onnx::ComputePrecision> precision = onnx::ParsePrecision(it->second);
  if (!precision.has_value()) {
    return absl::InvalidArgumentError(StrCat("model '", options.model_name, "': ", source, ": '",
                                             it->second, "' is not fp32 or bf16"));
  }
  return CompiledModel::Options{.precision = *precision};
}

}  // namespace

absl::StatusOr<std::shared_ptr<Model>> OnnxBackend::Load(const ModelLoadOptions& options) {
  // Declared inputs that have an initializer stay inputs, the initializer their default.
  onnx::LoadOptions load_options;
  for (const TensorSpec& declared : options.declared_inputs) {
    load_options.initializer_inputs.push_back(declared.name);
  }
  BRIGADE_ASSIGN_OR_RETURN(onnx::LoadedModel loaded,
                           onnx::LoadOnnxFile(options.model_path, load_options));
  bool optimize = true;
  if (auto it = options.parameters.find("optimize"); it != options.parameters.end()) {
    optimize = it->second != "false" && it->second != "0";
  }
  if (optimize) {
    auto report = onnx::OptimizeGraph(&loaded.graph);
    if (!report.ok()) {
      return absl::Status(
          report.status().code(),
          StrCat("model '", options.model_name, "': optimizing: ", report.status().message()));
    }
  }
  BRIGADE_ASSIGN_OR_RETURN(CompiledModel::Options compile_options,
                           CompileOptionsFor(options, loaded.metadata));
  ModelSignature signature;
  std::vector<TensorSpec> inputs, outputs;
  for (onnx::ValueId id : loaded.graph.inputs()) inputs.push_back(SpecOf(loaded.graph.value(id)));
  for (onnx::ValueId id : loaded.graph.outputs()) {
    outputs.push_back(SpecOf(loaded.graph.value(id)));
  }
  BRIGADE_ASSIGN_OR_RETURN(
      signature.inputs, MergeSpecs(options, std::move(inputs), options.declared_inputs, "input"));
  BRIGADE_ASSIGN_OR_RETURN(signature.outputs, MergeSpecs(options, std::move(outputs),
                                                         options.declared_outputs, "output"));
  BRIGADE_ASSIGN_OR_RETURN(
      InputDefaults defaults,
      TakeInputDefaults(options, std::move(loaded.input_defaults), &signature));
  BRIGADE_ASSIGN_OR_RETURN(
      std::shared_ptr<CompiledModel> compiled,
      CompiledModel::Compile(options.model_name, std::move(loaded.graph), compile_options));
  if (!compiled->precision_note().empty()) {
    spdlog::warn("model '{}' version {}: {}", options.model_name, options.version,
                 compiled->precision_note());
  }
  // Pack the weights now (at load, not on the first request) by planning one batch-1 run, and
  // free each fp32 initializer as soon as its readers have packed it, so that the load's peak
  // holds one copy of a weight, not two. A model whose shapes depend on input contents may
  // refuse zero inputs; its weights are then packed (and kept) on first use instead.
  if (auto warm = MakeWarmupInputs(signature, options.max_batch_size > 0 ? 1 : 0); warm.ok()) {
    // The load goes on when this fails: a source is released only once all its readers have
    // packed it, and a later plan rebuilds a released source from its packed copy, so the model
    // still runs; the weights this plan did not reach keep their fp32 sources and are packed on
    // first use.
    if (absl::Status released = onnx::PlanAndReleaseSources(*compiled, *warm); !released.ok()) {
      spdlog::warn(
          "model '{}' version {}: packing the weights at load failed; those not packed keep "
          "their fp32 initializers and are packed on first use: {}",
          options.model_name, options.version, released.message());
    }
  }
  return std::make_shared<OnnxModel>(std::move(compiled), std::move(signature),
                                     std::make_shared<const InputDefaults>(std::move(defaults)));
}

}  // namespace brigade::engine
