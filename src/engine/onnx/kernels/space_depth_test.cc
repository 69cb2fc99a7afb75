// DepthToSpace and SpaceToDepth beyond the ONNX node tests (batch 1, one block size): batches,
// non-square inputs and both DepthToSpace modes against the definition written here element by
// element, SpaceToDepth undoing DepthToSpace in DCR mode, and block sizes that do not divide the
// dims failing the plan naming the node and attribute.

#include <cstdint>
#include <string>
#include <vector>

#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

OnnxBuilder SpaceDepthGraph(const std::string& op, std::vector<int64_t> in, int64_t b,
                            const std::string& mode, std::vector<int64_t> out) {
  OnnxBuilder g;
  g.Input("x", DataType::kFp32, std::move(in));
  auto& node = g.Node(op, {"x"}, {"y"});
  OnnxBuilder::SetInt(node, "blocksize", b);
  if (!mode.empty()) OnnxBuilder::SetString(node, "mode", mode);
  g.Output("y", DataType::kFp32, std::move(out));
  return g;
}

// y[n][c][h][w] of DepthToSpace by its definition: the block position (h % b, w % b) selects the
// input channel, DCR with the block outermost in the channel index, CRD innermost.
std::vector<float> ReferenceDepthToSpace(const Tensor& x, int64_t b, bool crd) {
  const Shape& s = x.shape();
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3], co = c / (b * b);
  std::vector<float> y;
  for (int64_t in = 0; in < n; ++in) {
    for (int64_t oc = 0; oc < co; ++oc) {
      for (int64_t oh = 0; oh < h * b; ++oh) {
        for (int64_t ow = 0; ow < w * b; ++ow) {
          const int64_t bh = oh % b, bw = ow % b;
          const int64_t ic = crd ? oc * b * b + bh * b + bw : (bh * b + bw) * co + oc;
          y.push_back(
              x.values<float>()[static_cast<size_t>(((in * c + ic) * h + oh / b) * w + ow / b)]);
        }
      }
    }
  }
  return y;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.values<float>().begin(), t.values<float>().end());
}

TEST(SpaceDepthKernelTest, DepthToSpaceMatchesItsDefinitionInBothModes) {
  const Tensor x = RandomTensor({2, 12, 3, 5}, 3);
  for (const std::string mode : {"DCR", "CRD"}) {
    const std::vector<Tensor> out =
        RunGraph(LoadGraph(SpaceDepthGraph("DepthToSpace", {2, 12, 3, 5}, 2, mode, {2, 3, 6, 10})),
                 {&x, 1}, 2);
    ASSERT_EQ(out.size(), 1u) << mode;
    EXPECT_EQ(Values(out[0]), ReferenceDepthToSpace(x, 2, mode == "CRD")) << mode;
  }
}

TEST(SpaceDepthKernelTest, SpaceToDepthUndoesDepthToSpaceDcr) {
  const Tensor x = RandomTensor({2, 18, 2, 4}, 4);
  const std::vector<Tensor> space = RunGraph(
      LoadGraph(SpaceDepthGraph("DepthToSpace", {2, 18, 2, 4}, 3, "", {2, 2, 6, 12})), {&x, 1});
  ASSERT_EQ(space.size(), 1u);
  const std::vector<Tensor> depth =
      RunGraph(LoadGraph(SpaceDepthGraph("SpaceToDepth", {2, 2, 6, 12}, 3, "", {2, 18, 2, 4})),
               {&space[0], 1});
  ASSERT_EQ(depth.size(), 1u);
  EXPECT_EQ(Values(depth[0]), Values(x));
}

TEST(SpaceDepthKernelTest, BlockSizesThatDoNotDivideFailThePlanNamingTheNode) {
  struct Bad {
    std::string op;
    std::vector<int64_t> shape;
    int64_t blocksize;
    std::string says;
  };
  for (const Bad& bad : {Bad{"DepthToSpace", {1, 6, 2, 2}, 2, "multiple of blocksize"},
                         Bad{"SpaceToDepth", {1, 2, 3, 4}, 2, "multiples of blocksize"},
                         Bad{"SpaceToDepth", {1, 2, 4, 4}, 0, "'blocksize' is 0"}}) {
    // Declared with a valid blocksize (ONNX's shape inference would refuse the bad one at load),
    // then swapped on the loaded graph.
    Graph graph = LoadGraph(SpaceDepthGraph(bad.op, bad.shape, 1, "", bad.shape));
    for (Node& node : graph.nodes()) node.attributes.SetInt("blocksize", bad.blocksize);
    absl::Status status;
    auto compiled = CompiledModel::Compile("test", std::move(graph));
    if (!compiled.ok()) {
      status = compiled.status();
    } else {
      auto session = Session::Create(*compiled, Session::Options{});
      if (!session.ok()) {
        status = session.status();
      } else {
        const std::vector<Tensor> inputs{Ramp(bad.shape)};
        std::vector<Tensor> outputs;
        status = (*session)->Run(inputs, &outputs);
      }
    }
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad.op << ": " << status;
    EXPECT_NE(status.message().find(StrCat("node '", bad.op, "_0'")), std::string::npos) << status;
    EXPECT_NE(status.message().find(bad.says), std::string::npos) << status;
  }
}

}  // namespace
}  // namespace brigade::engine::onnx
