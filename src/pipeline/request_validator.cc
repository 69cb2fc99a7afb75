#include "pipeline/request_validator.h"

#include <optional>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "pipeline/classification.h"

namespace brigade::pipeline {
namespace {

// The model-side shape for a reshaped input: the batch dimension (if any) followed by the
// config's reshape dims, a -1 there resolved from the element count.
absl::StatusOr<Shape> ReshapedShape(const repository::IoSpec& io, const Tensor& tensor,
                                    bool batching) {
  Shape shape;
  int64_t known = 1;
  int unknown = -1;
  const size_t first = batching ? 1 : 0;
  if (batching) {
    shape.push_back(tensor.shape()[0]);
    known *= tensor.shape()[0];
  }
  for (size_t i = first; i < io.model_shape.size(); ++i) {
    shape.push_back(io.model_shape[i]);
    if (io.model_shape[i] < 0) {
      unknown = static_cast<int>(shape.size()) - 1;
    } else {
      known *= io.model_shape[i];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || tensor.num_elements() % known != 0) {
      return absl::InvalidArgumentError(
          StrCat("input '", io.name, "' of shape ", ShapeToString(tensor.shape()),
                 " cannot be reshaped to ", ShapeToString(io.model_shape)));
    }
    shape[static_cast<size_t>(unknown)] = tensor.num_elements() / known;
  }
  return shape;
}

}  // namespace

absl::Status PrepareRequest(const repository::ModelVersion& model, InferRequest* request) {
  const std::string& name = model.name();
  const bool batching = model.max_batch_size() > 0;
  const std::vector<repository::IoSpec>& specs = model.inputs();

  // Unknown or repeated inputs.
  for (size_t i = 0; i < request->inputs.size(); ++i) {
    const std::string& input_name = request->inputs[i].name;
    bool known = false;
    for (const repository::IoSpec& spec : specs) known |= spec.name == input_name;
    if (!known) {
      return absl::InvalidArgumentError(
          StrCat("model '", name, "' has no input named '", input_name, "'"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (request->inputs[j].name == input_name) {
        return absl::InvalidArgumentError(
            StrCat("model '", name, "' input '", input_name, "' is given more than once"));
      }
    }
  }

  // Into signature order in place: a request that gives every input allocates nothing here.
  // The inputs are known and unique (above), so there are at most specs.size() of them; an
  // omitted optional input gets a placeholder (an empty name until it is placed).
  std::vector<InferInput>& inputs = request->inputs;
  if (inputs.size() < specs.size()) inputs.resize(specs.size());
  int64_t batch_size = -1;
  for (size_t k = 0; k < specs.size(); ++k) {
    const repository::IoSpec& spec = specs[k];
    size_t given = k;
    while (given < inputs.size() && inputs[given].name != spec.name) ++given;
    if (given == inputs.size()) {
      if (!spec.optional) {
        return absl::InvalidArgumentError(
            StrCat("model '", name, "' is missing input '", spec.name, "'"));
      }
      // Omitted optional input: an empty tensor holds its place; the model uses its default.
      // Positions from k on hold the inputs of later specs and at least one placeholder.
      size_t placeholder = k;
      while (placeholder < inputs.size() && !inputs[placeholder].name.empty()) ++placeholder;
      BRIGADE_CHECK(placeholder < inputs.size(), "an omitted input has a placeholder");
      std::swap(inputs[placeholder], inputs[k]);
      inputs[k].name = spec.name;
      continue;
    }
    if (given != k) std::swap(inputs[given], inputs[k]);
    InferInput& prepared = inputs[k];
    const Tensor& tensor = prepared.tensor;
    if (tensor.dtype() != spec.dtype) {
      return absl::InvalidArgumentError(StrCat("model '", name, "' input '", spec.name,
                                               "': expected datatype ", DataTypeName(spec.dtype),
                                               ", got ", DataTypeName(tensor.dtype())));
    }
    if (!ShapeMatches(spec.shape, tensor.shape())) {
      return absl::InvalidArgumentError(StrCat("model '", name, "' input '", spec.name,
                                               "': expected shape ", ShapeToString(spec.shape),
                                               ", got ", ShapeToString(tensor.shape())));
    }
    if (batching) {
      const int64_t rows = tensor.shape()[0];
      if (rows < 1 || rows > model.max_batch_size()) {
        return absl::InvalidArgumentError(
            StrCat("model '", name, "' input '", spec.name, "': batch size ", rows,
                   " is outside [1, max_batch_size=", model.max_batch_size(), "]"));
      }
      if (batch_size >= 0 && rows != batch_size) {
        return absl::InvalidArgumentError(StrCat("model '", name, "' input '", spec.name,
                                                 "': batch size ", rows,
                                                 " differs from the other inputs' ", batch_size));
      }
      batch_size = rows;
    }
    if (spec.reshaped) {
      BRIGADE_ASSIGN_OR_RETURN(Shape shape, ReshapedShape(spec, prepared.tensor, batching));
      absl::StatusOr<Tensor> reshaped = prepared.tensor.Reshaped(std::move(shape));
      if (!reshaped.ok()) {
        return absl::InvalidArgumentError(
            StrCat("model '", name, "' input '", spec.name, "': ", reshaped.status().message()));
      }
      prepared.tensor = *std::move(reshaped);
    }
  }
  if (batching && batch_size < 0) {
    return absl::InvalidArgumentError(
        StrCat("model '", name,
               "': the request gives none of the model's inputs, so its batch "
               "size is unknown"));
  }

  for (size_t i = 0; i < request->outputs.size(); ++i) {
    const std::string& output_name = request->outputs[i].name;
    bool known = false;
    for (const repository::IoSpec& spec : model.outputs()) known |= spec.name == output_name;
    if (!known) {
      return absl::InvalidArgumentError(
          StrCat("model '", name, "' has no output named '", output_name, "'"));
    }
    if (request->outputs[i].parameters.Contains(kClassificationParameter)) {
      const std::optional<int64_t> k =
          request->outputs[i].parameters.GetInt(kClassificationParameter);
      if (!k.has_value() || *k < 1) {
        return absl::InvalidArgumentError(
            StrCat("model '", name, "' output '", output_name,
                   "': parameter classification must be a positive integer (the number of "
                   "classes to return)"));
      }
      for (const repository::IoSpec& spec : model.outputs()) {
        if (spec.name == output_name &&
            (spec.dtype == DataType::kBytes || spec.dtype == DataType::kBool)) {
          return absl::InvalidArgumentError(StrCat("model '", name, "' output '", output_name,
                                                   "' is ", DataTypeName(spec.dtype),
                                                   ": classification needs a numeric output"));
        }
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (request->outputs[j].name == output_name) {
        return absl::InvalidArgumentError(
            StrCat("model '", name, "' output '", output_name, "' is requested more than once"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace brigade::pipeline
