#include "engine/onnx/inspect.h"

#include <filesystem>
#include <fstream>

#include "engine/onnx/test_util/onnx_builder.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

namespace fs = std::filesystem;

std::string WriteModel(const OnnxBuilder& b, const std::string& name) {
  const fs::path path = fs::temp_directory_path() / ("brigade_inspect_" + name + ".onnx");
  std::ofstream(path, std::ios::binary) << b.Serialize();
  return path.string();
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(InspectTest, DescribesOpsParametersPassesAndFlops) {
  // x [N,3,8,8] → Conv(4×3×3×3) → Relu: 2 · (N·4·6·6) · (3·3·3) FLOPs = 7776 at N = 1.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3, 8, 8});
  b.Initializer("w", RandomTensor({4, 3, 3, 3}, 1));
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Relu", {"c"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 4, 6, 6});
  const std::string path = WriteModel(b, "conv");
  auto text = InspectOnnxModel(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(Contains(*text, "x  FP32  [-1,3,8,8]")) << *text;
  EXPECT_TRUE(Contains(*text, "parameters  108 ")) << *text;
  EXPECT_TRUE(Contains(*text, "Conv")) << *text;
  EXPECT_TRUE(Contains(*text, "activation_fusion")) << *text;
  EXPECT_TRUE(Contains(*text, "ai.brigade.FusedConv")) << *text;
  EXPECT_TRUE(Contains(*text, "FLOPs          7776 ")) << *text;
  InspectOptions batch4;
  batch4.batch = 4;
  auto text4 = InspectOnnxModel(path, batch4);
  ASSERT_TRUE(text4.ok());
  EXPECT_TRUE(Contains(*text4, "FLOPs          31104 ")) << *text4;
  fs::remove(path);
}

TEST(InspectTest, ExplainsWhyAnUnsupportedModelCannotRun) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {3, 3});
  b.Node("Det", {"x"}, {"y"}).set_name("determinant");
  b.Output("y", DataType::kFp32, {});
  const std::string path = WriteModel(b, "det");
  auto text = InspectOnnxModel(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(Contains(*text, "not runnable")) << *text;
  EXPECT_TRUE(Contains(*text, "determinant")) << *text;
  fs::remove(path);
}

TEST(InspectTest, MissingFileIsNotFound) {
  EXPECT_EQ(InspectOnnxModel("/nonexistent.onnx").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace brigade::engine::onnx
