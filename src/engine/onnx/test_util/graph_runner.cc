#include "engine/onnx/test_util/graph_runner.h"

#include <cmath>
#include <limits>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/loader/model_loader.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {

Graph LoadGraph(const OnnxBuilder& builder) {
  auto loaded = LoadOnnxBytes(builder.Serialize(), "");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return Graph();
  return std::move(loaded->graph);
}

std::vector<Tensor> RunGraph(Graph graph, std::span<const Tensor> inputs, int threads) {
  auto compiled = CompiledModel::Compile("test", std::move(graph));
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return {};
  Session::Options options;
  options.threads = threads;
  auto session = Session::Create(*compiled, options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  std::vector<Tensor> outputs;
  const absl::Status status = (*session)->Run(inputs, &outputs);
  EXPECT_TRUE(status.ok()) << status;
  return outputs;
}

int CountOps(const Graph& graph, std::string_view op_type) {
  int n = 0;
  for (const Node& node : graph.nodes()) n += !node.removed && node.op_type == op_type;
  return n;
}

float MaxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != DataType::kFp32 || b.dtype() != DataType::kFp32) {
    return std::numeric_limits<float>::infinity();
  }
  float worst = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst = std::max(worst, std::abs(a.values<float>()[i] - b.values<float>()[i]));
  }
  return worst;
}

}  // namespace brigade::engine::onnx
