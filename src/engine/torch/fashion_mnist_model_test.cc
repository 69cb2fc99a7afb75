// The bundled demo models (models/fashion_mnist*, trained by scripts/train_fashion_mnist.py) load
// through the TorchScript backend from their own signature file and classify the real
// Fashion-MNIST test set as accurately as the training script measured in PyTorch.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/torch/fashion_mnist_data.h"
#include "engine/torch/torch_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace brigade::engine {
namespace {

using ::testing::ElementsAre;

constexpr int kMaxBatchSize = 32;

std::string ModelDir(std::string_view name) {
  return std::string(BRIGADE_MODELS_DIR) + "/" + std::string(name);
}

double ReportedAccuracy(const std::string& model_dir) {
  std::ifstream file(model_dir + "/metrics.json");
  std::stringstream text;
  text << file.rdbuf();
  simdjson::dom::parser parser;
  double accuracy = -1;
  simdjson::dom::element root;
  if (parser.parse(text.str()).get(root) != simdjson::SUCCESS ||
      root["test_accuracy"].get_double().get(accuracy) != simdjson::SUCCESS) {
    ADD_FAILURE() << model_dir << "/metrics.json has no test_accuracy";
  }
  return accuracy;
}

class FashionMnistModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FashionMnistModelTest, AccuracyThroughBackendMatchesTrainingReport) {
  auto test_set = ReadFashionMnist(std::string(kFashionMnistDir), "t10k");
  if (absl::IsNotFound(test_set.status())) GTEST_SKIP() << test_set.status();
  ASSERT_TRUE(test_set.ok()) << test_set.status();

  const std::string model_dir = ModelDir(GetParam());
  ModelLoadOptions options;
  options.model_name = GetParam();
  options.model_path = model_dir + "/1/model.pt";
  options.max_batch_size = kMaxBatchSize;
  TorchBackend backend;
  auto model = backend.Load(options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT((*model)->signature().inputs,
              ElementsAre(TensorSpec{"image", DataType::kFp32, {-1, 1, 28, 28}}));
  EXPECT_THAT((*model)->signature().outputs,
              ElementsAre(TensorSpec{"logits", DataType::kFp32, {-1, 10}}));
  auto instance = (*model)->CreateInstance(InstanceOptions{});
  ASSERT_TRUE(instance.ok()) << instance.status();

  const int64_t count = static_cast<int64_t>(test_set->labels.size());
  int64_t correct = 0;
  std::vector<Tensor> outputs;
  for (int64_t begin = 0; begin < count; begin += kMaxBatchSize) {
    const int64_t rows = std::min<int64_t>(kMaxBatchSize, count - begin);
    auto batch = test_set->images.SliceRows(begin, rows);
    ASSERT_TRUE(batch.ok()) << batch.status();
    ASSERT_TRUE((*instance)->Execute(std::span<const Tensor>(&*batch, 1), &outputs).ok());
    ASSERT_THAT(outputs[0].shape(), ElementsAre(rows, 10));
    auto logits = outputs[0].values<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = logits.data() + r * 10;
      const int64_t predicted = std::max_element(row, row + 10) - row;
      correct += predicted == test_set->labels[begin + r];
    }
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(count);
  // Batch composition may flip an argmax on a near tie; more than a few images would be a bug.
  EXPECT_NEAR(accuracy, ReportedAccuracy(model_dir), 0.0005);
  EXPECT_GT(accuracy, GetParam() == "fashion_mnist" ? 0.90 : 0.85);
}

INSTANTIATE_TEST_SUITE_P(BundledModels, FashionMnistModelTest,
                         ::testing::Values("fashion_mnist", "fashion_mnist_small"));

}  // namespace
}  // namespace brigade::engine
