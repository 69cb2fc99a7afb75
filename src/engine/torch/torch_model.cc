#include "engine/torch/torch_model.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>

#include "ATen/Parallel.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/torch/torch_error.h"
#include "engine/torch/torch_signature.h"
#include "engine/torch/torch_tensor.h"

namespace brigade::engine {

struct TorchModelState {
  std::string name;
  int max_batch_size = 0;
  ModelSignature signature;
  torch::jit::Module module;
  // forward() arguments after self: defaults where the schema has them, None elsewhere; every
  // slot without a default is filled by an input (checked by Create).
  std::vector<c10::IValue> default_arguments;
  // For input i, its slot in default_arguments.
  std::vector<int> argument_of_input;
  // For output i, the index of the forward() result it takes.
  std::vector<int> result_of_output;
  // Shape patterns checked at Execute: the signature's, with the batch dimension set to -1 when
  // the model batches.
  std::vector<Shape> input_patterns;
  std::vector<Shape> output_patterns;
};

namespace {

absl::Status ModelError(absl::StatusCode code, std::string_view model, std::string_view message) {
  return absl::Status(code, StrCat("model '", model, "': ", message));
}

std::vector<Shape> BatchFreePatterns(const std::vector<TensorSpec>& specs, int max_batch_size) {
  std::vector<Shape> patterns;
  for (const TensorSpec& spec : specs) {
    Shape pattern = spec.shape;
    if (max_batch_size > 0 && !pattern.empty()) pattern[0] = -1;
    patterns.push_back(std::move(pattern));
  }
  return patterns;
}

absl::Status CheckSpecs(const std::vector<TensorSpec>& specs, std::string_view kind,
                        int max_batch_size) {
  for (const TensorSpec& spec : specs) {
    if (!ToTorchScalarType(spec.dtype)) {
      return absl::InvalidArgumentError(StrCat(kind, " '", spec.name, "' has type ",
                                               DataTypeName(spec.dtype),
                                               ", which libtorch cannot represent"));
    }
    if (max_batch_size > 0 && spec.shape.empty()) {
      return absl::InvalidArgumentError(StrCat(kind, " '", spec.name,
                                               "' has no dimensions, but the model batches "
                                               "(max_batch_size > 0) along dimension 0"));
    }
  }
  return absl::OkStatus();
}

// Number of tensors forward() returns according to its declared type; nullopt when only a call
// can tell (List[Tensor], Any).
absl::StatusOr<std::optional<size_t>> DeclaredResultCount(const c10::TypePtr& type) {
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
      return std::optional<size_t>(1);
    case c10::TypeKind::TupleType: {
      const auto& elements = type->expectRef<c10::TupleType>().elements();
      for (const c10::TypePtr& element : elements) {
        if (element->kind() != c10::TypeKind::TensorType) {
          return absl::InvalidArgumentError(
              StrCat("forward() returns ", type->str(), "; every tuple element must be a Tensor"));
        }
      }
      return std::optional<size_t>(elements.size());
    }
    case c10::TypeKind::ListType:
      if (type->expectRef<c10::ListType>().getElementType()->kind() == c10::TypeKind::TensorType) {
        return std::optional<size_t>();
      }
      break;
    case c10::TypeKind::AnyType:
      return std::optional<size_t>();
    default:
      break;
  }
  return absl::InvalidArgumentError(
      StrCat("forward() returns ", type->str(),
             "; Brigade serves a Tensor, a tuple or a list of Tensors"));
}

// Fills the argument defaults and checks forward()'s schema against the signature.
absl::Status BindSchema(TorchModelState* state) {
  c10::optional<torch::jit::Method> forward = state->module.find_method("forward");
  if (!forward) return absl::InvalidArgumentError("the TorchScript module has no forward() method");
  const c10::FunctionSchema& schema = forward->function().getSchema();
  const std::vector<c10::Argument>& all_arguments = schema.arguments();
  if (all_arguments.empty()) return absl::InvalidArgumentError("forward() takes no self argument");
  const std::span<const c10::Argument> arguments(all_arguments.data() + 1,
                                                 all_arguments.size() - 1);
  std::vector<std::string> argument_names;
  for (const c10::Argument& argument : arguments) argument_names.push_back(argument.name());

  BRIGADE_ASSIGN_OR_RETURN(state->argument_of_input,
                           MapInputsToArguments(state->signature.inputs, argument_names));
  std::vector<bool> bound(arguments.size(), false);
  for (size_t i = 0; i < state->argument_of_input.size(); ++i) {
    const c10::Argument& argument = arguments[state->argument_of_input[i]];
    if (!c10::TensorType::get()->isSubtypeOf(*argument.type())) {
      return absl::InvalidArgumentError(
          StrCat("input '", state->signature.inputs[i].name, "' is passed as forward() argument '",
                 argument.name(), "' of type ", argument.type()->str(), ", which is not a Tensor"));
    }
    bound[state->argument_of_input[i]] = true;
    // An input may be omitted exactly when its argument has a default to run with.
    TensorSpec& input = state->signature.inputs[i];
    const bool has_default = argument.default_value().has_value();
    if (input.optional && !has_default) {
      return absl::InvalidArgumentError(
          StrCat("input '", input.name, "' is optional in config, but forward() argument '",
                 argument.name(), "' has no default to run with when a request omits it"));
    }
    input.optional = has_default;
  }
  for (size_t arg = 0; arg < arguments.size(); ++arg) {
    const c10::optional<c10::IValue>& default_value = arguments[arg].default_value();
    if (!bound[arg] && !default_value) {
      return absl::InvalidArgumentError(StrCat(
          "forward() argument '", arguments[arg].name(),
          "' has no default and no input is passed as it (inputs: ", state->signature.inputs.size(),
          ", forward() arguments after self: ", arguments.size(), ")"));
    }
    state->default_arguments.push_back(default_value.value_or(c10::IValue()));
  }

  BRIGADE_ASSIGN_OR_RETURN(state->result_of_output, MapOutputsToResults(state->signature.outputs));
  if (schema.returns().size() != 1) {
    return absl::InvalidArgumentError(
        StrCat("forward() declares ", schema.returns().size(), " return values"));
  }
  BRIGADE_ASSIGN_OR_RETURN(std::optional<size_t> result_count,
                           DeclaredResultCount(schema.returns()[0].type()));
  for (size_t i = 0; i < state->result_of_output.size() && result_count; ++i) {
    if (static_cast<size_t>(state->result_of_output[i]) >= *result_count) {
      return absl::InvalidArgumentError(
          StrCat("output '", state->signature.outputs[i].name, "' takes result ",
                 state->result_of_output[i], ", but forward() returns ",
                 schema.returns()[0].type()->str(), " (", *result_count, " tensor(s))"));
    }
  }
  return absl::OkStatus();
}

// Splits what forward() returned into its tensors.
absl::StatusOr<std::vector<at::Tensor>> ResultTensors(const c10::IValue& result) {
  std::vector<at::Tensor> tensors;
  if (result.isTensor()) {
    tensors.push_back(result.toTensor());
    return tensors;
  }
  c10::ArrayRef<c10::IValue> elements;
  if (result.isTuple()) {
    elements = result.toTupleRef().elements().asArrayRef();
  } else if (result.isList()) {
    elements = result.toListRef();
  } else {
    return absl::InternalError(StrCat("forward() returned a ", result.tagKind(),
                                      ", not a Tensor, tuple or list of Tensors"));
  }
  for (size_t i = 0; i < elements.size(); ++i) {
    if (!elements[i].isTensor()) {
      return absl::InternalError(
          StrCat("forward() result ", i, " is a ", elements[i].tagKind(), ", not a Tensor"));
    }
    tensors.push_back(elements[i].toTensor());
  }
  return tensors;
}

absl::Status ApplyThreadCount(int threads) {
  try {
    // at::get_num_threads() first makes libtorch initialize this thread's count, so its lazy
    // per-thread initialization cannot later overwrite the count set here.
    if (at::get_num_threads() != threads) at::set_num_threads(threads);
  } catch (const std::exception& e) {
    return absl::InternalError(
        StrCat("cannot set ", threads, " intra-op threads: ", DescribeTorchException(e)));
  }
  return absl::OkStatus();
}

class TorchInstance final : public ModelInstance {
 public:
  TorchInstance(std::shared_ptr<const TorchModelState> state, int intra_op_threads)
      : state_(std::move(state)), module_(state_->module), intra_op_threads_(intra_op_threads) {}

  absl::Status Execute(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) override {
    absl::Status status = Run(inputs, outputs);
    if (!status.ok()) {
      outputs->clear();
      return ModelError(status.code(), state_->name, ToStd(status.message()));
    }
    return status;
  }

 private:
  absl::StatusOr<int64_t> CheckInputs(std::span<const Tensor> inputs) const {
    const std::vector<TensorSpec>& specs = state_->signature.inputs;
    if (inputs.size() != specs.size()) {
      std::vector<std::string_view> names;
      for (const TensorSpec& spec : specs) names.push_back(spec.name);
      return absl::InvalidArgumentError(StrCat("expected ", specs.size(), " input(s) (",
                                               fmt::join(names, ", "), "), got ", inputs.size()));
    }
    int64_t rows = -1;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& input = inputs[i];
      if (input.empty() && specs[i].optional) continue;  // omitted: forward()'s default
      if (input.dtype() != specs[i].dtype) {
        return absl::InvalidArgumentError(StrCat("input '", specs[i].name, "': expected ",
                                                 DataTypeName(specs[i].dtype), ", got ",
                                                 DataTypeName(input.dtype())));
      }
      if (!ShapeMatches(state_->input_patterns[i], input.shape())) {
        return absl::InvalidArgumentError(StrCat("input '", specs[i].name, "': shape ",
                                                 ShapeToString(input.shape()), " does not match ",
                                                 ShapeToString(specs[i].shape)));
      }
      if (state_->max_batch_size > 0) {
        const int64_t input_rows = input.shape()[0];
        if (rows >= 0 && input_rows != rows) {
          return absl::InvalidArgumentError(StrCat("input '", specs[i].name, "' has ", input_rows,
                                                   " batch rows, the first input ", rows));
        }
        rows = input_rows;
      }
    }
    if (rows > state_->max_batch_size) {
      return absl::InvalidArgumentError(
          StrCat("batch of ", rows, " rows exceeds max_batch_size ", state_->max_batch_size));
    }
    return rows;
  }

  absl::Status Run(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) {
    BRIGADE_ASSIGN_OR_RETURN(const int64_t rows, CheckInputs(inputs));
    BRIGADE_RETURN_IF_ERROR(ApplyThreadCount(intra_op_threads_));
    std::vector<at::Tensor> results;
    {
      c10::InferenceMode inference_mode;
      std::vector<c10::IValue> arguments = state_->default_arguments;
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].empty()) continue;  // an omitted optional input keeps its default
        absl::StatusOr<at::Tensor> tensor = ToTorch(inputs[i]);
        if (!tensor.ok()) {
          return absl::InvalidArgumentError(StrCat("input '", state_->signature.inputs[i].name,
                                                   "': ", tensor.status().message()));
        }
        arguments[state_->argument_of_input[i]] = *std::move(tensor);
      }
      c10::IValue result;
      try {
        result = module_.forward(std::move(arguments));
      } catch (const std::exception& e) {
        return absl::InternalError(StrCat("forward() failed: ", DescribeTorchException(e)));
      }
      BRIGADE_ASSIGN_OR_RETURN(results, ResultTensors(result));
    }
    return CollectOutputs(std::move(results), rows, outputs);
  }

  absl::Status CollectOutputs(std::vector<at::Tensor> results, int64_t rows,
                              std::vector<Tensor>* outputs) const {
    const std::vector<TensorSpec>& specs = state_->signature.outputs;
    outputs->clear();
    outputs->reserve(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      const size_t index = static_cast<size_t>(state_->result_of_output[i]);
      if (index >= results.size()) {
        return absl::InternalError(StrCat("output '", specs[i].name, "' takes forward() result ",
                                          index, ", but forward() returned ", results.size(),
                                          " tensor(s)"));
      }
      absl::StatusOr<Tensor> output = FromTorch(std::move(results[index]));
      if (!output.ok()) {
        return absl::InternalError(
            StrCat("output '", specs[i].name, "': ", output.status().message()));
      }
      if (output->dtype() != specs[i].dtype) {
        return absl::InternalError(StrCat("output '", specs[i].name, "': forward() produced ",
                                          DataTypeName(output->dtype()), ", the signature says ",
                                          DataTypeName(specs[i].dtype)));
      }
      if (!ShapeMatches(state_->output_patterns[i], output->shape()) ||
          (rows >= 0 && output->shape()[0] != rows)) {
        return absl::InternalError(StrCat(
            "output '", specs[i].name, "': forward() produced shape ",
            ShapeToString(output->shape()), ", the signature says ", ShapeToString(specs[i].shape),
            rows >= 0 ? StrCat(" with ", rows, " batch rows") : std::string()));
      }
      outputs->push_back(*std::move(output));
    }
    return absl::OkStatus();
  }

  const std::shared_ptr<const TorchModelState> state_;
  // A handle on the shared module (copying a Module copies a reference, not the weights).
  torch::jit::Module module_;
  const int intra_op_threads_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<TorchModel>> TorchModel::Create(const ModelLoadOptions& options,
                                                               torch::jit::Module module,
                                                               ModelSignature signature) {
  if (options.max_batch_size < 0) {
    return ModelError(absl::StatusCode::kInvalidArgument, options.model_name,
                      StrCat("max_batch_size must be >= 0, got ", options.max_batch_size));
  }
  auto state = std::make_shared<TorchModelState>();
  state->name = options.model_name;
  state->max_batch_size = options.max_batch_size;
  state->signature = std::move(signature);
  state->module = std::move(module);
  absl::Status status = CheckSpecs(state->signature.inputs, "input", state->max_batch_size);
  if (status.ok()) {
    status = CheckSpecs(state->signature.outputs, "output", state->max_batch_size);
  }
  if (status.ok()) {
    try {
      status = BindSchema(state.get());
    } catch (const std::exception& e) {
      status = absl::InvalidArgumentError(
          StrCat("cannot read forward()'s schema: ", DescribeTorchException(e)));
    }
  }
  if (!status.ok()) {
    return ModelError(status.code(), options.model_name,
                      StrCat(options.model_path, ": ", status.message()));
  }
  state->input_patterns = BatchFreePatterns(state->signature.inputs, state->max_batch_size);
  state->output_patterns = BatchFreePatterns(state->signature.outputs, state->max_batch_size);
  return std::make_shared<TorchModel>(std::move(state));
}

const ModelSignature& TorchModel::signature() const { return state_->signature; }

absl::StatusOr<std::unique_ptr<ModelInstance>> TorchModel::CreateInstance(
    const InstanceOptions& options) {
  if (options.intra_op_threads < 1) {
    return ModelError(absl::StatusCode::kInvalidArgument, state_->name,
                      StrCat("instance ", options.index, ": intra_op_threads must be >= 1, got ",
                             options.intra_op_threads));
  }
  if (absl::Status status = ApplyThreadCount(options.intra_op_threads); !status.ok()) {
    return ModelError(status.code(), state_->name, ToStd(status.message()));
  }
  return std::make_unique<TorchInstance>(state_, options.intra_op_threads);
}

}  // namespace brigade::engine
