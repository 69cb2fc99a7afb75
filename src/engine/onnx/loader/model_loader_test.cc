#include "engine/onnx/loader/model_loader.h"

#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/onnx/test_util/onnx_builder.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(ModelLoaderTest, LoadsAGraphWithInitializersAndStaticShapes) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 4});
  b.Initializer("w", Ramp({4, 3}));
  b.Node("MatMul", {"x", "w"}, {"y"});
  b.Node("Relu", {"y"}, {"z"});
  b.Output("z", DataType::kFp32, {-1, 3});
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Graph& g = loaded->graph;
  ASSERT_EQ(g.inputs().size(), 1u);
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_TRUE(g.value(g.FindValue("w")).is_constant());
  // Shape inference filled in the intermediate's shape; the batch dim stays unknown.
  const Value& y = g.value(g.FindValue("y"));
  ASSERT_TRUE(y.shape.has_value());
  EXPECT_EQ(*y.shape, (Shape{-1, 3}));
}

TEST(ModelLoaderTest, ConstantNodesBecomeConstantValues) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2});
  auto& c = b.Node("Constant", {}, {"two"});
  auto* attr = c.add_attribute();
  attr->set_name("value_float");
  attr->set_type(::onnx::AttributeProto::FLOAT);
  attr->set_f(2.0f);
  b.Node("Mul", {"x", "two"}, {"y"});
  b.Output("y", DataType::kFp32, {2});
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->graph.nodes().size(), 1u);
  EXPECT_TRUE(loaded->graph.value(loaded->graph.FindValue("two")).is_constant());
}

// ONNX's convolution shape rule derives the kernel from the weight's dimensions and indexes the
// input's dimensions with it: a rank-4 weight on a rank-2 input crashed the process inside
// InferShapes (found by onnx_model_loader_fuzz). Declared ranks and ranks inferred through a
// Reshape both reach it.
TEST(ModelLoaderTest, ConvolutionWeightOfAnotherRankThanItsInputDoesNotCrashTheLoad) {
  for (const bool through_reshape : {false, true}) {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32,
            through_reshape ? std::vector<int64_t>{1, 2, 4, 4} : std::vector<int64_t>{-1, 2});
    b.Initializer("w", RandomTensor({3, 2, 3, 3}, 1));
    std::string conv_input = "x";
    if (through_reshape) {
      const std::array<int64_t, 2> dims = {1, 32};
      b.Initializer("shape", *Tensor::FromValues<int64_t>(Shape{2}, dims));
      b.Node("Reshape", {"x", "shape"}, {"flat"});
      conv_input = "flat";
    }
    b.Node("Conv", {conv_input, "w"}, {"y"});
    b.Output("y", DataType::kFp32, {-1, -1});
    // Reaching this line is the check; the engine's planner refuses the convolution later.
    const auto loaded = LoadOnnxBytes(b.Serialize(), "");
    EXPECT_TRUE(loaded.ok() || loaded.status().code() == absl::StatusCode::kInvalidArgument)
        << loaded.status();
  }
}

TEST(ModelLoaderTest, WindowAttributesOutOfRangeDoNotCrashTheLoad) {
  struct Case {
    std::string op;
    std::string attribute;
    std::vector<int64_t> values;
  };
  const std::vector<Case> cases = {
      {"Conv", "strides", {0, 2}},      {"Conv", "dilations", {1, 0}},
      {"Conv", "pads", {-9, 0, 0, 0}},  {"Conv", "group", {0}},
      {"MaxPool", "strides", {0, 1}},   {"AveragePool", "kernel_shape", {0, 2}},
      {"MaxPool", "dilations", {0, 0}}, {"Conv", "strides", {int64_t{1} << 62, 1}},
  };
  for (const Case& c : cases) {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {1, 2, 5, 5});
    std::vector<std::string> inputs = {"x"};
    if (c.op == "Conv") {
      b.Initializer("w", RandomTensor({3, 2, 3, 3}, 1));
      inputs.push_back("w");
    }
    ::onnx::NodeProto& node = b.Node(c.op, inputs, {"y"});
    if (c.op != "Conv" && c.attribute != "kernel_shape")
      OnnxBuilder::SetInts(node, "kernel_shape", {2, 2});
    if (c.attribute == "group") {
      OnnxBuilder::SetInt(node, c.attribute, c.values[0]);
    } else {
      OnnxBuilder::SetInts(node, c.attribute, c.values);
    }
    b.Output("y", DataType::kFp32, {-1, -1, -1, -1});
    // Reaching this line is the check: ONNX's shape rule divides by these values.
    const auto loaded = LoadOnnxBytes(b.Serialize(), "");
    EXPECT_TRUE(loaded.ok() || loaded.status().code() == absl::StatusCode::kInvalidArgument)
        << c.op << " " << c.attribute << ": " << loaded.status();
  }
}

// The fuzzer's find: ONNX's shape inference copied a ragged raw_data (7 bytes for one int64)
// into an empty vector. The load is refused with the tensor's name instead.
TEST(ModelLoaderTest, RaggedRawDataIsRefusedNotParsedByShapeInference) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 4, 6});
  const std::array<int64_t, 1> one = {1};
  b.Initializer("starts", *Tensor::FromValues<int64_t>(Shape{1}, one));
  b.Initializer("ends", *Tensor::FromValues<int64_t>(Shape{1}, one));
  b.Initializer("axes", *Tensor::FromValues<int64_t>(Shape{1}, one));
  for (auto& init : *b.model().mutable_graph()->mutable_initializer()) {
    if (init.name() == "axes") init.mutable_raw_data()->resize(7);
  }
  b.Node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, -1, -1});
  const auto loaded = LoadOnnxBytes(b.Serialize(), "");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument) << loaded.status();
  EXPECT_NE(loaded.status().message().find("axes"), std::string::npos) << loaded.status();
}

TEST(ModelLoaderTest, ConvolutionKernelShapeComesFromItsWeightInitializer) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 2, 5, 5});
  b.Initializer("w", RandomTensor({3, 2, 3, 3}, 1));
  b.Node("Conv", {"x", "w"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, -1, -1, -1});
  const auto loaded = LoadOnnxBytes(b.Serialize(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Value& y = loaded->graph.value(loaded->graph.FindValue("y"));
  ASSERT_TRUE(y.shape.has_value());
  EXPECT_EQ(*y.shape, (Shape{1, 3, 3, 3}));
}

TEST(ModelLoaderTest, GarbageBytesAreRejectedNotCrashed) {
  auto loaded = LoadOnnxBytes(std::string("\x08\xff\xff\xff\xff\x0f garbage", 16), "");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ModelLoaderTest, TruncatedModelIsRejected) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {4});
  b.Initializer("w", Ramp({4}));
  b.Node("Add", {"x", "w"}, {"y"});
  b.Output("y", DataType::kFp32, {4});
  const std::string bytes = b.Serialize();
  for (size_t cut : {bytes.size() / 3, bytes.size() / 2, bytes.size() - 3}) {
    EXPECT_FALSE(LoadOnnxBytes(bytes.substr(0, cut), "").ok()) << cut;
  }
}

TEST(ModelLoaderTest, UnsupportedOpErrorNamesNodeAndOp) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {3, 3});
  auto& node = b.Node("Det", {"x"}, {"y"});
  node.set_name("my_det");
  b.Output("y", DataType::kFp32, {});
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(Message(loaded.status()).find("my_det"), std::string::npos);
  EXPECT_NE(Message(loaded.status()).find("Det"), std::string::npos);
}

TEST(ModelLoaderTest, OpsetOutsideTheSupportedRangeIsRejected) {
  OnnxBuilder b(6);
  b.Input("x", DataType::kFp32, {4});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", DataType::kFp32, {4});
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(Message(loaded.status()).find("opset 6"), std::string::npos);
}

TEST(ModelLoaderTest, UndefinedInputIsReportedWithTheNode) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {4});
  b.Node("Add", {"x", "nowhere"}, {"y"}).set_name("adder");
  b.Output("y", DataType::kFp32, {4});
  LoadOptions options;
  options.run_checker = false;  // the loader's own check, not ONNX's
  auto loaded = LoadOnnxBytes(b.Serialize(), "", options);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(loaded.status()).find("adder"), std::string::npos);
  EXPECT_NE(Message(loaded.status()).find("nowhere"), std::string::npos);
}

TEST(ModelLoaderTest, CyclicGraphIsRejected) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {4});
  b.Node("Add", {"x", "b"}, {"a"});
  b.Node("Relu", {"a"}, {"b"});
  b.Output("b", DataType::kFp32, {4});
  LoadOptions options;
  options.run_checker = false;
  auto loaded = LoadOnnxBytes(b.Serialize(), "", options);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(loaded.status()).find("cycle"), std::string::npos);
}

TEST(ModelLoaderTest, CheckerFailuresBecomeInvalidArgument) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {4});
  b.Node("Relu", {"x", "x", "x"}, {"y"});  // Relu takes one input
  b.Output("y", DataType::kFp32, {4});
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(loaded.status()).find("checker"), std::string::npos);
}

TEST(ModelLoaderTest, ExternalDataEscapingTheDirectoryIsRejectedBeforeAnyRead) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2});
  auto* init = b.model().mutable_graph()->add_initializer();
  init->set_name("w");
  init->set_data_type(::onnx::TensorProto::FLOAT);
  init->add_dims(2);
  init->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* loc = init->add_external_data();
  loc->set_key("location");
  loc->set_value("../../etc/passwd");
  b.Node("Add", {"x", "w"}, {"y"});
  b.Output("y", DataType::kFp32, {2});
  auto loaded = LoadOnnxBytes(b.Serialize(), "/tmp");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kPermissionDenied);
}

// Issue 21 item 3: external data stays inside the model's directory through a link too, and
// nothing outside is read. A model whose weights sit in the directory loads; the same model
// whose weights file is a link to a file beside the directory is refused, as is "../".
TEST(ModelLoaderTest, ExternalDataThroughALinkOutOfTheDirectoryIsRejected) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("brigade_external_link_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "model");
  const float weights[] = {1.0f, 2.0f};
  for (const fs::path& file : {root / "model" / "w.bin", root / "outside.bin"}) {
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(weights), sizeof(weights));
  }
  fs::create_symlink(root / "outside.bin", root / "model" / "link.bin");
  auto model = [](const std::string& location) {
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {2});
    auto* init = b.model().mutable_graph()->add_initializer();
    init->set_name("w");
    init->set_data_type(::onnx::TensorProto::FLOAT);
    init->add_dims(2);
    init->set_data_location(::onnx::TensorProto::EXTERNAL);
    auto* loc = init->add_external_data();
    loc->set_key("location");
    loc->set_value(location);
    b.Node("Add", {"x", "w"}, {"y"});
    b.Output("y", DataType::kFp32, {2});
    return b.Serialize();
  };
  const std::string dir = (root / "model").string();
  auto inside = LoadOnnxBytes(model("w.bin"), dir);
  EXPECT_TRUE(inside.ok()) << inside.status();
  auto linked = LoadOnnxBytes(model("link.bin"), dir);
  EXPECT_EQ(linked.status().code(), absl::StatusCode::kPermissionDenied) << linked.status();
  EXPECT_NE(Message(linked.status()).find("'link.bin' escapes"), std::string::npos)
      << linked.status();
  auto dotdot = LoadOnnxBytes(model("../outside.bin"), dir);
  EXPECT_EQ(dotdot.status().code(), absl::StatusCode::kPermissionDenied) << dotdot.status();
  fs::remove_all(root);
}

TEST(ModelLoaderTest, MissingFileIsNotFound) {
  EXPECT_EQ(LoadOnnxFile("/nonexistent/model.onnx").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace brigade::engine::onnx
