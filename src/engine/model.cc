#include "engine/model.h"

#include <string>

#include "core/status_macros.h"

namespace brigade::engine {

absl::StatusOr<std::vector<Tensor>> MakeWarmupInputs(const ModelSignature& signature,
                                                     int batch_size) {
  std::vector<Tensor> inputs;
  inputs.reserve(signature.inputs.size());
  for (const TensorSpec& spec : signature.inputs) {
    Shape shape = spec.shape;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i == 0 && batch_size > 0) {
        shape[i] = batch_size;
      } else if (shape[i] < 0) {
        shape[i] = 1;
      }
    }
    if (spec.dtype == DataType::kBytes) {
      BRIGADE_ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
      std::vector<std::string> empty(static_cast<size_t>(count));
      BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::FromStrings(shape, empty));
      inputs.push_back(std::move(tensor));
    } else {
      BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Zeros(spec.dtype, shape));
      inputs.push_back(std::move(tensor));
    }
  }
  return inputs;
}

}  // namespace brigade::engine
