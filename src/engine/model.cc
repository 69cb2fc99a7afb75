#include "engine/model.h"

#include <cstdint>
#include <string>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::engine {

absl::StatusOr<std::vector<Tensor>> MakeWarmupInputs(const ModelSignature& signature,
                                                     int batch_size, size_t max_bytes) {
  std::vector<Shape> shapes;
  shapes.reserve(signature.inputs.size());
  // Sized first, so that nothing is allocated for inputs that could never fit.
  uint64_t total_bytes = 0;
  for (const TensorSpec& spec : signature.inputs) {
    Shape shape = spec.shape;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i == 0 && batch_size > 0) {
        shape[i] = batch_size;
      } else if (shape[i] < 0) {
        shape[i] = 1;
      }
    }
    BRIGADE_ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
    const uint64_t element_bytes = spec.dtype == DataType::kBytes
                                       ? sizeof(uint32_t) + sizeof(std::string)
                                       : DataTypeSize(spec.dtype);
    const auto elements = static_cast<uint64_t>(count);
    // total_bytes <= max_bytes holds: an input is added only when it fits in what is left.
    if (element_bytes > 0 && elements > (max_bytes - total_bytes) / element_bytes) {
      return absl::ResourceExhaustedError(StrCat("warm-up inputs at batch size ", batch_size,
                                                 " need more than ", max_bytes, " bytes (input '",
                                                 spec.name, "' is ", ShapeToString(shape), ")"));
    }
    total_bytes += elements * element_bytes;
    shapes.push_back(std::move(shape));
  }
  std::vector<Tensor> inputs;
  inputs.reserve(signature.inputs.size());
  for (size_t i = 0; i < signature.inputs.size(); ++i) {
    const TensorSpec& spec = signature.inputs[i];
    if (spec.dtype == DataType::kBytes) {
      BRIGADE_ASSIGN_OR_RETURN(int64_t count, ElementCount(shapes[i]));
      std::vector<std::string> empty(static_cast<size_t>(count));
      BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::FromStrings(shapes[i], empty));
      inputs.push_back(std::move(tensor));
    } else {
      BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Zeros(spec.dtype, shapes[i]));
      inputs.push_back(std::move(tensor));
    }
  }
  return inputs;
}

}  // namespace brigade::engine
