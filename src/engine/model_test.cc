#include "engine/model.h"

#include <memory>

#include "engine/backend.h"
#include "gtest/gtest.h"

namespace brigade::engine {
namespace {

TEST(MakeWarmupInputsTest, FillsBatchAndVariableDims) {
  ModelSignature signature;
  signature.inputs.push_back({"x", DataType::kFp32, {-1, 3, -1}});
  signature.inputs.push_back({"s", DataType::kBytes, {-1, 2}});
  auto inputs = MakeWarmupInputs(signature, 4);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  EXPECT_EQ((*inputs)[0].shape(), (Shape{4, 3, 1}));
  EXPECT_EQ((*inputs)[0].values<float>()[0], 0.0f);
  EXPECT_EQ((*inputs)[1].shape(), (Shape{4, 2}));
  EXPECT_EQ((*inputs)[1].byte_size(), 8u * 4);
}

TEST(MakeWarmupInputsTest, UnbatchedModelsKeepDimZero) {
  ModelSignature signature;
  signature.inputs.push_back({"x", DataType::kInt64, {7, -1}});
  auto inputs = MakeWarmupInputs(signature, 0);
  ASSERT_TRUE(inputs.ok());
  EXPECT_EQ((*inputs)[0].shape(), (Shape{7, 1}));
}

class NamedBackend : public Backend {
 public:
  NamedBackend(std::string name, std::string platform) : name_(name), platform_(platform) {}
  std::string_view name() const override { return name_; }
  std::string_view platform() const override { return platform_; }
  std::string_view default_model_filename() const override { return "model.bin"; }
  absl::StatusOr<std::shared_ptr<Model>> Load(const ModelLoadOptions&) override {
    return absl::UnimplementedError("not in this test");
  }

 private:
  std::string name_, platform_;
};

TEST(BackendRegistryTest, FindsByBackendThenPlatform) {
  BackendRegistry registry;
  registry.Register(std::make_unique<NamedBackend>("pytorch", "pytorch_libtorch"));
  registry.Register(std::make_unique<NamedBackend>("onnxruntime", "onnxruntime_onnx"));
  EXPECT_EQ((*registry.Find("", "onnxruntime"))->name(), "onnxruntime");
  EXPECT_EQ((*registry.Find("pytorch_libtorch", ""))->name(), "pytorch");
  EXPECT_EQ((*registry.Find("pytorch_libtorch", "onnxruntime"))->name(), "onnxruntime");
  auto missing = registry.Find("tensorrt_plan", "");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("tensorrt_plan"), std::string::npos);
}

}  // namespace
}  // namespace brigade::engine
