#include "engine/torch/torch_signature.h"

#include <set>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "simdjson.h"

namespace brigade::engine {
namespace {

absl::StatusOr<TensorSpec> ParseSpec(simdjson::dom::element element, std::string_view where) {
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(StrCat(where, " is not an object"));
  }
  TensorSpec spec;
  std::string_view name;
  if (object["name"].get_string().get(name) != simdjson::SUCCESS || name.empty()) {
    return absl::InvalidArgumentError(StrCat(where, ": \"name\" must be a non-empty string"));
  }
  spec.name = std::string(name);
  std::string_view type_name;
  if (object["datatype"].get_string().get(type_name) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        StrCat(where, " '", spec.name, "': \"datatype\" must be a string such as \"FP32\""));
  }
  std::optional<DataType> type = ParseDataType(type_name);
  if (!type) type = ParseConfigDataType(type_name);
  if (!type || *type == DataType::kInvalid) {
    return absl::InvalidArgumentError(
        StrCat(where, " '", spec.name, "': unknown datatype '", type_name, "'"));
  }
  spec.dtype = *type;
  simdjson::dom::array dims;
  if (object["shape"].get_array().get(dims) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        StrCat(where, " '", spec.name, "': \"shape\" must be a list of integers"));
  }
  for (simdjson::dom::element dim : dims) {
    int64_t value = 0;
    if (dim.get_int64().get(value) != simdjson::SUCCESS || value < -1) {
      return absl::InvalidArgumentError(StrCat(
          where, " '", spec.name, "': shape dimensions must be integers >= -1 (-1 = variable)"));
    }
    spec.shape.push_back(value);
  }
  return spec;
}

absl::StatusOr<std::vector<TensorSpec>> ParseSpecList(simdjson::dom::object root,
                                                      std::string_view key) {
  simdjson::dom::array list;
  if (root[key].get_array().get(list) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(StrCat("\"", key, "\" must be a list of tensor specs"));
  }
  std::vector<TensorSpec> specs;
  std::set<std::string, std::less<>> names;
  for (simdjson::dom::element element : list) {
    BRIGADE_ASSIGN_OR_RETURN(TensorSpec spec,
                             ParseSpec(element, StrCat(key, "[", specs.size(), "]")));
    if (!names.insert(spec.name).second) {
      return absl::InvalidArgumentError(StrCat(key, ": duplicate name '", spec.name, "'"));
    }
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) return absl::InvalidArgumentError(StrCat("\"", key, "\" is empty"));
  return specs;
}

absl::StatusOr<std::vector<TensorSpec>> ChooseSpecs(const ModelLoadOptions& options,
                                                    const std::vector<TensorSpec>& declared,
                                                    const ModelSignature* embedded,
                                                    std::vector<TensorSpec> ModelSignature::*which,
                                                    std::string_view kind) {
  if (!declared.empty()) return declared;
  if (embedded != nullptr && !(embedded->*which).empty()) return embedded->*which;
  return absl::InvalidArgumentError(
      StrCat("model '", options.model_name, "': TorchScript file ", options.model_path,
             " does not describe its ", kind, " (no ", kTorchSignatureFile,
             " extra file); declare them in config.pbtxt, e.g. ",
             kind == "inputs" ? "input [ { name: \"INPUT__0\"" : "output [ { name: \"OUTPUT__0\"",
             " data_type: TYPE_FP32 dims: [ ... ] } ]"));
}

}  // namespace

absl::StatusOr<ModelSignature> ParseTorchSignatureJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(json.data(), json.size()).get(root); error != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(StrCat("not valid JSON: ", simdjson::error_message(error)));
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("not a JSON object");
  }
  ModelSignature signature;
  BRIGADE_ASSIGN_OR_RETURN(signature.inputs, ParseSpecList(object, "inputs"));
  BRIGADE_ASSIGN_OR_RETURN(signature.outputs, ParseSpecList(object, "outputs"));
  return signature;
}

absl::StatusOr<ModelSignature> ResolveTorchSignature(const ModelLoadOptions& options,
                                                     const ModelSignature* embedded) {
  ModelSignature signature;
  BRIGADE_ASSIGN_OR_RETURN(signature.inputs, ChooseSpecs(options, options.declared_inputs, embedded,
                                                         &ModelSignature::inputs, "inputs"));
  BRIGADE_ASSIGN_OR_RETURN(signature.outputs,
                           ChooseSpecs(options, options.declared_outputs, embedded,
                                       &ModelSignature::outputs, "outputs"));
  return signature;
}

std::optional<int> TritonTensorIndex(std::string_view name) {
  const size_t separator = name.rfind("__");
  if (separator == std::string_view::npos || separator == 0) return std::nullopt;
  int index = 0;
  if (!ParseInteger(name.substr(separator + 2), &index) || index < 0) return std::nullopt;
  return index;
}

absl::StatusOr<std::vector<int>> MapInputsToArguments(std::span<const TensorSpec> inputs,
                                                      std::span<const std::string> argument_names) {
  if (inputs.size() > argument_names.size()) {
    return absl::InvalidArgumentError(StrCat(inputs.size(), " inputs declared but forward() takes ",
                                             argument_names.size(), " argument(s) after self: (",
                                             fmt::join(argument_names, ", "), ")"));
  }
  std::vector<int> by_name;
  std::vector<int> by_index;
  for (const TensorSpec& input : inputs) {
    for (size_t arg = 0; arg < argument_names.size(); ++arg) {
      if (argument_names[arg] == input.name) by_name.push_back(static_cast<int>(arg));
    }
    if (std::optional<int> index = TritonTensorIndex(input.name)) by_index.push_back(*index);
  }
  std::vector<int> positions;
  if (by_name.size() == inputs.size()) {
    positions = std::move(by_name);
  } else if (by_index.size() == inputs.size()) {
    positions = std::move(by_index);
  } else {
    for (size_t i = 0; i < inputs.size(); ++i) positions.push_back(static_cast<int>(i));
  }
  std::vector<bool> taken(argument_names.size(), false);
  for (size_t i = 0; i < positions.size(); ++i) {
    const int arg = positions[i];
    if (arg >= static_cast<int>(argument_names.size())) {
      return absl::InvalidArgumentError(
          StrCat("input '", inputs[i].name, "' names forward() argument ", arg,
                 " but forward() takes ", argument_names.size(), " after self"));
    }
    if (taken[arg]) {
      return absl::InvalidArgumentError(StrCat("input '", inputs[i].name,
                                               "' maps to forward() argument '",
                                               argument_names[arg], "', as another input does"));
    }
    taken[arg] = true;
  }
  return positions;
}

absl::StatusOr<std::vector<int>> MapOutputsToResults(std::span<const TensorSpec> outputs) {
  std::vector<int> indices;
  for (const TensorSpec& output : outputs) {
    if (std::optional<int> index = TritonTensorIndex(output.name)) indices.push_back(*index);
  }
  if (indices.size() != outputs.size()) {
    indices.clear();
    for (size_t i = 0; i < outputs.size(); ++i) indices.push_back(static_cast<int>(i));
  }
  std::set<int> seen;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!seen.insert(indices[i]).second) {
      return absl::InvalidArgumentError(StrCat("output '", outputs[i].name, "' takes result ",
                                               indices[i], ", as another output does"));
    }
  }
  return indices;
}

}  // namespace brigade::engine
