// ModelRunner on models with several inputs: the random samples it draws for agreement checks
// (onnx_run's conventions), and the errors that name the input at fault.

#include "optimize/model_runner.h"

#include <algorithm>

#include "engine/onnx/test_util/onnx_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::optimize {
namespace {

using engine::onnx::OnnxBuilder;
using engine::onnx::RandomTensor;
using ::testing::HasSubstr;

// input_ids, attention_mask int64 [-1, 4] and features fp32 [-1, 3] → one [N, 16] output.
OnnxBuilder TextModel(int64_t seq = 4) {
  OnnxBuilder b;
  b.Input("input_ids", DataType::kInt64, {-1, seq});
  b.Input("attention_mask", DataType::kInt64, {-1, seq});
  b.Input("features", DataType::kFp32, {-1, 3});
  b.Initializer("embedding", RandomTensor({1000, 2}, 1));
  b.Node("Gather", {"embedding", "input_ids"}, {"e"});
  b.Node("Flatten", {"e"}, {"f"});
  OnnxBuilder::SetInt(b.Node("Cast", {"attention_mask"}, {"m"}), "to", 1);
  OnnxBuilder::SetInt(b.Node("Concat", {"f", "m", "features"}, {"y"}), "axis", 1);
  b.Output("y", DataType::kFp32, {-1, 3 * seq + 3});
  return b;
}

TEST(ModelRunnerTest, RandomSamplesDrawIdsMasksOfOnesAndUnitFloats) {
  auto runner = ModelRunner::Create(TextModel().model(), "text.onnx", "", 1);
  ASSERT_TRUE(runner.ok()) << runner.status();
  ASSERT_EQ((*runner)->num_inputs(), 3u);
  auto samples = (*runner)->RandomSamples(5, 7);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 3u);
  EXPECT_EQ((*samples)[0].shape(), (Shape{5, 4}));
  const auto ids = (*samples)[0].values<int64_t>();
  EXPECT_TRUE(std::all_of(ids.begin(), ids.end(), [](int64_t v) { return v >= 0 && v < 1000; }));
  EXPECT_FALSE(std::all_of(ids.begin(), ids.end(), [&](int64_t v) { return v == ids[0]; }));
  const auto mask = (*samples)[1].values<int64_t>();
  EXPECT_TRUE(std::all_of(mask.begin(), mask.end(), [](int64_t v) { return v == 1; }));
  const auto features = (*samples)[2].values<float>();
  EXPECT_TRUE(
      std::all_of(features.begin(), features.end(), [](float v) { return v >= -1 && v < 1; }));

  // The same seed draws the same samples, and they run.
  auto again = (*runner)->RandomSamples(5, 7);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(std::equal(ids.begin(), ids.end(), (*again)[0].values<int64_t>().begin()));
  auto out = (*runner)->RunAll(*samples, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), (Shape{5, 15}));
  EXPECT_EQ(out->values<float>()[8], 1.0f);  // the mask's first column, cast
}

TEST(ModelRunnerTest, WrongInputCountsAndVariableDimensionsAreClearErrors) {
  auto runner = ModelRunner::Create(TextModel().model(), "text.onnx", "", 1);
  ASSERT_TRUE(runner.ok()) << runner.status();
  const Tensor one = RandomTensor({4, 3}, 2);
  auto short_data = (*runner)->RunAll(one, 2);
  EXPECT_EQ(short_data.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(short_data.status().message(), HasSubstr("has 3 inputs; the data gives 1"));

  auto variable = ModelRunner::Create(TextModel(-1).model(), "text.onnx", "", 1);
  ASSERT_TRUE(variable.ok()) << variable.status();
  auto samples = (*variable)->RandomSamples(2, 1);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(samples.status().message(), HasSubstr("'input_ids' has a variable dimension"));
}

}  // namespace
}  // namespace brigade::optimize
