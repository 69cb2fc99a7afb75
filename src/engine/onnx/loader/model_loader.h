#ifndef BRIGADE_ENGINE_ONNX_LOADER_MODEL_LOADER_H_
#define BRIGADE_ENGINE_ONNX_LOADER_MODEL_LOADER_H_

// Loads an ONNX model (a ModelProto file) into the engine's Graph:
//
//   bytes ─parse─► ModelProto ─ONNX checker─► ─ONNX shape inference─► Graph ─canonicalize─►
//   ─support check─► LoadedModel
//
// * Parsing uses Debian's libonnx_proto, which links the same libprotobuf as the rest of Brigade,
//   so there is exactly one protobuf runtime and one onnx.proto descriptor in the process.
// * ONNX's checker and shape inference throw; every exception is caught here and becomes
//   INVALID_ARGUMENT naming the model. Shape inference only adds static shape hints: when it
//   fails the model still loads (shapes are computed per request by the planner anyway).
// * External data is read only from inside the model's directory (tensor_proto.h).
// * Opsets 7–17 of the default domain are accepted. Every node must have a kernel
//   (LoadOptions::require_supported), else the error names the node, its op and why.
// * Subgraphs (If branches, Loop and Scan bodies) become Graphs of their own (attribute.h), each
//   outer-scope value they read made a captured input, their node names prefixed with the
//   enclosing node's ("/Loop/body/Add"); nesting is bounded by kMaxSubgraphDepth. An If whose
//   branches declare different output types or shapes is UNIMPLEMENTED (attribute.h, planner).
// * A corrupt or hostile file yields an error status, never a crash: sizes are validated before
//   use, cycles and undefined inputs are reported, protobuf's recursion limit bounds nesting.
//
// Thread safety: free functions; safe to call concurrently.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "engine/onnx/ir/graph.h"

namespace brigade::engine::onnx {

inline constexpr int kMinOnnxOpset = 7;
inline constexpr int kMaxOnnxOpset = 17;
// Deepest nesting of subgraphs (an If inside a Loop's body is 2). Exported models nest two or
// three levels; the bound keeps the loader's, the passes' and the planner's recursion shallow
// whatever a hostile file nests (protobuf's recursion limit alone allows about 30 levels).
inline constexpr int kMaxSubgraphDepth = 8;

struct LoadOptions {
  // Refuse nodes without a kernel (serving). Off for tools that only describe models.
  bool require_supported = true;
  // Run ONNX's checker (always on when serving; tests of the loader's own checks turn it off).
  bool run_checker = true;
  // Graph inputs that also have an initializer of the same name are constants (the initializer)
  // unless named here: these stay graph inputs, and their initializer goes to
  // LoadedModel::input_defaults as the value to run with when a request omits them (ONNX's
  // optional inputs). Names that are not such inputs are ignored.
  std::vector<std::string> initializer_inputs;
};

struct LoadedModel {
  Graph graph;
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  // The model's metadata_props (key → value; a repeated key keeps its last value). Brigade reads
  // "brigade.precision" (onnx_backend.h).
  std::map<std::string, std::string> metadata;
  // Defaults of the graph inputs named in LoadOptions::initializer_inputs, by input name.
  std::map<std::string, Tensor> input_defaults;
};

absl::StatusOr<LoadedModel> LoadOnnxFile(const std::string& path, const LoadOptions& options = {});

// `model_dir` is where external data may live; empty refuses external data.
absl::StatusOr<LoadedModel> LoadOnnxBytes(std::string_view bytes, std::string_view model_dir,
                                          const LoadOptions& options = {});

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_LOADER_MODEL_LOADER_H_
