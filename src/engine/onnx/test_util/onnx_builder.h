#ifndef BRIGADE_ENGINE_ONNX_TEST_UTIL_ONNX_BUILDER_H_
#define BRIGADE_ENGINE_ONNX_TEST_UTIL_ONNX_BUILDER_H_

// OnnxBuilder: builds small ONNX ModelProtos in tests (loader, passes, kernels, backend), so
// tests state their graphs in a few lines instead of shipping binary files.
//
//   OnnxBuilder b;                                   // opset 13
//   b.Input("x", DataType::kFp32, {-1, 4});
//   b.Initializer("w", weights);
//   b.Node("MatMul", {"x", "w"}, {"y"});
//   b.Output("y", DataType::kFp32, {-1, 3});
//   std::string bytes = b.Serialize();
//
// Not for production code (no validation beyond what the loader under test performs).

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "onnx/onnx_pb.h"

namespace brigade::engine::onnx {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 13);

  void Input(const std::string& name, DataType dtype, std::vector<int64_t> shape);
  // ONNX's checker requires a shape on graph outputs; -1 dims become symbolic.
  void Output(const std::string& name, DataType dtype, std::vector<int64_t> shape);
  void Initializer(const std::string& name, const Tensor& tensor);
  ::onnx::NodeProto& Node(const std::string& op, std::vector<std::string> inputs,
                          std::vector<std::string> outputs, const std::string& domain = "");

  static void SetInt(::onnx::NodeProto& node, const std::string& name, int64_t value);
  static void SetFloat(::onnx::NodeProto& node, const std::string& name, float value);
  static void SetInts(::onnx::NodeProto& node, const std::string& name,
                      std::vector<int64_t> values);
  static void SetString(::onnx::NodeProto& node, const std::string& name, const std::string& value);
  // A subgraph attribute (If branch, Loop/Scan body): `body`'s graph, named `name`. Its inputs,
  // outputs and nodes are what `body` declared; its opset imports are the enclosing model's.
  static void SetGraph(::onnx::NodeProto& node, const std::string& name, const OnnxBuilder& body);

  ::onnx::ModelProto& model() { return model_; }
  std::string Serialize() const;

 private:
  ::onnx::ModelProto model_;
  int node_count_ = 0;
};

// y = x + bias, FP32 [-1, 4] each, where graph input "bias" also has an initializer, [10, 11, 12,
// 13]: ONNX's optional input, whose initializer a request that omits it runs with.
OnnxBuilder AddBiasGraph();

// A float tensor of `shape` filled with values v0, v0+step, ... (deterministic test data).
Tensor Ramp(std::vector<int64_t> shape, float v0 = 0.0f, float step = 1.0f);
// A float tensor of `shape` with pseudo-random values in [-1, 1) from `seed`.
Tensor RandomTensor(std::vector<int64_t> shape, uint32_t seed);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_TEST_UTIL_ONNX_BUILDER_H_
