// libFuzzer target for the ONNX engine's front half: model bytes → ModelProto → ONNX checker and
// shape inference → the engine's Graph (canonicalized, sorted, every op checked against the
// kernel registry) → the graph passes (constant folding runs kernels on initializers) → a
// CompiledModel → the planner's shape propagation for batch-1 inputs (kernels in shape-only mode,
// shape subgraphs evaluated). Nothing runs a whole model: that is onnx_hostile_model_test's job.
// See CMakeLists.txt for how to build it; seeds in tests/fuzz/onnx_model_loader_fuzz/ (written
// by tests/fuzz/write_onnx_seeds.py).
//
// Input: the model file's bytes, as LoadOnnxBytes reads them (no model folder, so external data
// is refused; onnx_model_loader_test covers the folder's checks).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/planner.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/passes/optimizer.h"

namespace {

using namespace brigade;
using namespace brigade::engine::onnx;

// The largest input the shape walk is given, in elements: the planner allocates constants it
// evaluates, so keep the fuzzer's memory about the model, not the inputs.
constexpr int64_t kMaxInputElements = 1 << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<LoadedModel> loaded = LoadOnnxBytes(bytes, "");
  if (!loaded.ok()) return 0;
  // A smaller folding budget than the server's: the fuzzer's -O0 sanitized kernels take seconds
  // per 100 MB, which would read as a hang (the server's budget is covered by unit tests).
  if (!OptimizeGraph(&loaded->graph, OptimizeOptions{.fold_budget_bytes = size_t{4} << 20}).ok()) {
    return 0;
  }

  // Batch-1 inputs of each graph input's static shape (unknown dims 1), as the backend's warm-up
  // builds them; an input whose shape cannot be made small is left out of the walk.
  std::vector<Tensor> inputs;
  for (ValueId id : loaded->graph.inputs()) {
    const Value& value = loaded->graph.value(id);
    Shape shape = value.shape.value_or(Shape{});
    int64_t elements = 1;
    for (int64_t& dim : shape) {
      dim = dim < 0 ? 1 : std::min<int64_t>(dim, 64);
      elements *= dim;
      if (elements > kMaxInputElements) return 0;
    }
    const DataType dtype = value.dtype == DataType::kInvalid ? DataType::kFp32 : value.dtype;
    absl::StatusOr<Tensor> tensor =
        dtype == DataType::kBytes
            ? Tensor::FromStrings(shape, std::vector<std::string>(static_cast<size_t>(elements)))
            : Tensor::Zeros(dtype, shape);
    if (!tensor.ok()) return 0;
    inputs.push_back(*std::move(tensor));
  }
  absl::StatusOr<std::shared_ptr<CompiledModel>> compiled =
      CompiledModel::Compile("fuzz", std::move(loaded->graph));
  if (!compiled.ok()) return 0;
  (void)PropagateShapes(**compiled, inputs);
  return 0;
}
