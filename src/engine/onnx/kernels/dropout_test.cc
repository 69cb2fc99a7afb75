// Dropout in training mode: at a ratio known at plan time to be 0 it drops nothing and scales by
// 1, so the kernel runs it as the identity with an all-true mask (what exporters write for a
// module traced with training=True whose dropout is 0, e.g. torchvision's Swin-T attention);
// any other ratio needs random masks, which the engine refuses at plan time.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

OnnxBuilder TrainingDropout(float ratio) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3});
  const float ratios[] = {ratio};
  const bool training[] = {true};
  b.Initializer("ratio", *Tensor::FromValues<float>(Shape{}, ratios));
  b.Initializer("training", *Tensor::FromValues<bool>(Shape{}, training));
  b.Node("Dropout", {"x", "ratio", "training"}, {"y", "mask"});
  b.Output("y", DataType::kFp32, {2, 3});
  b.Output("mask", DataType::kBool, {2, 3});
  return b;
}

TEST(DropoutKernelTest, TrainingModeAtRatioZeroIsTheIdentityWithAnAllTrueMask) {
  const Tensor x = Ramp({2, 3}, -1);
  const std::vector<Tensor> out = RunGraph(LoadGraph(TrainingDropout(0.0f)), {&x, 1});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(MaxAbsDiff(out[0], x), 0.0f);
  for (bool kept : out[1].values<bool>()) EXPECT_TRUE(kept);
}

TEST(DropoutKernelTest, TrainingModeAtAnotherRatioIsRefusedNamingTheNode) {
  auto compiled = CompiledModel::Compile("test", LoadGraph(TrainingDropout(0.1f)));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  absl::Status status;
  auto session = Session::Create(*compiled, Session::Options{});
  if (!session.ok()) {
    status = session.status();
  } else {
    const std::vector<Tensor> inputs{Ramp({2, 3})};
    std::vector<Tensor> outputs;
    status = (*session)->Run(inputs, &outputs);
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_NE(status.message().find("node 'Dropout_0' (Dropout)"), std::string::npos) << status;
  EXPECT_NE(status.message().find("random masks"), std::string::npos) << status;
}

}  // namespace
}  // namespace brigade::engine::onnx
