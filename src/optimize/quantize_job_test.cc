#include "optimize/quantize_job.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/strings.h"
#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimize/test_util/npy_writer.h"

namespace brigade::optimize {
namespace {

using test_util::WriteNpy;

using engine::onnx::OnnxBuilder;
using engine::onnx::RandomTensor;
using ::testing::HasSubstr;

class QuantizeJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // x [-1, 16] → Gemm(16→12) → Relu → Gemm(12→4) → y
    OnnxBuilder b;
    b.Input("x", DataType::kFp32, {-1, 16});
    b.Initializer("w1", RandomTensor({16, 12}, 1));
    b.Initializer("b1", RandomTensor({12}, 2));
    b.Initializer("w2", RandomTensor({12, 4}, 3));
    b.Node("Gemm", {"x", "w1", "b1"}, {"h"});
    b.Node("Relu", {"h"}, {"r"});
    b.Node("MatMul", {"r", "w2"}, {"y"});
    b.Output("y", DataType::kFp32, {-1, 4});
    model_ = Path("model.onnx");
    std::ofstream(model_, std::ios::binary) << b.Serialize();
    data_ = Path("calib.npy");
    WriteNpy(data_, RandomTensor({64, 16}, 4));
    options_.model_path = model_;
    options_.output_path = Path("out.onnx");
    options_.calibration_path = data_;
    options_.time_iterations = 2;
    options_.clock = &clock_;
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
  std::string model_, data_;
  FakeClock clock_;
  QuantizeJobOptions options_;
};

TEST_F(QuantizeJobTest, StaticModelPassesTheGateAndIsWritten) {
  auto report = RunQuantizeJob(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->evaluated);
  EXPECT_TRUE(report->gate_passed) << report->Text(options_);
  EXPECT_TRUE(report->written);
  EXPECT_TRUE(std::filesystem::exists(options_.output_path));
  ASSERT_TRUE(report->comparison.has_value());
  EXPECT_EQ(report->comparison->rows, 64);
  EXPECT_GT(report->comparison->mean_cosine, 0.99);
  const std::string text = report->Text(options_);
  EXPECT_THAT(text, HasSubstr("2 of 2 quantized"));
  EXPECT_THAT(text, HasSubstr("gate        passed"));
  EXPECT_THAT(report->Json(), HasSubstr("\"written\":true"));
}

TEST_F(QuantizeJobTest, GateMissRefusesToWriteUnlessForced) {
  options_.max_accuracy_drop = -1;  // nothing can pass
  auto report = RunQuantizeJob(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->gate_passed);
  EXPECT_FALSE(report->written);
  EXPECT_FALSE(std::filesystem::exists(options_.output_path));
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr(".tmp")));
  }
  EXPECT_THAT(report->Text(options_), HasSubstr("FAILED"));
  options_.force = true;
  report = RunQuantizeJob(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->written);
  EXPECT_THAT(report->Text(options_), HasSubstr("written because of --force"));
}

TEST_F(QuantizeJobTest, SensitivityAndFallbackKeepLayersFp32UntilTheGateHolds) {
  options_.sensitivity = true;
  options_.fallback = true;
  options_.max_accuracy_drop = -1;  // fails until every layer is back in fp32
  auto report = RunQuantizeJob(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->sensitivity.size(), 2u);
  EXPECT_EQ(report->fallback_fp32.size(), 2u);
  EXPECT_THAT(report->Text(options_), HasSubstr("sensitivity"));
  // Each step's comparison, the last with every layer back in fp32: the fp32 model itself.
  ASSERT_EQ(report->fallback_steps.size(), 2u);
  EXPECT_EQ(report->fallback_steps[0].node, report->sensitivity[0].node);
  EXPECT_DOUBLE_EQ(report->fallback_steps[1].after.top1_agreement, 1.0);
  EXPECT_NEAR(report->fallback_steps[1].after.mean_cosine, 1.0, 1e-6);
  for (const LayerSensitivity& l : report->sensitivity) {
    EXPECT_GT(l.mean_cosine, 0.9);
    EXPECT_LE(l.mean_cosine, 1.0 + 1e-9);
  }
  const std::string json = report->Json();
  EXPECT_THAT(
      json, HasSubstr(StrCat("\"sensitivity\":[{\"node\":\"", report->sensitivity[0].node, "\"")));
  EXPECT_THAT(
      json, HasSubstr(StrCat("\"fallback\":[{\"node\":\"", report->fallback_steps[0].node, "\"")));
}

TEST(RankBySensitivityTest, EqualDropsAreRankedByCosine) {
  std::vector<LayerSensitivity> layers = {
      {"a", "Conv", 0.0, 1.0, 0.9999}, {"b", "Conv", 0.5, 0.995, 0.9990},
      {"c", "Conv", 0.0, 1.0, 0.9950}, {"d", "Conv", 0.5, 0.995, 0.9999},
      {"e", "Conv", 0.0, 1.0, 0.9999},
  };
  RankBySensitivity(&layers);
  std::vector<std::string> order;
  order.reserve(layers.size());
  for (const LayerSensitivity& l : layers) order.push_back(l.node);
  // The larger drop first; within a drop the lower cosine; a full tie keeps graph order.
  EXPECT_THAT(order, ::testing::ElementsAre("b", "d", "c", "a", "e"));
}

TEST_F(QuantizeJobTest, DynamicModeWithoutDataNeedsForce) {
  options_.quantize.mode = QuantMode::kDynamic;
  options_.calibration_path.clear();
  auto report = RunQuantizeJob(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->evaluated);
  EXPECT_FALSE(report->written);
  EXPECT_THAT(report->Text(options_), HasSubstr("not evaluated"));
}

TEST_F(QuantizeJobTest, Bf16MarksTheFp32GraphAndGoesThroughTheSameGate) {
  options_.quantize.mode = QuantMode::kBf16;
  options_.calibration_path.clear();
  options_.eval_path = data_;
  auto report = RunQuantizeJob(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->gate_passed) << report->Text(options_);
  ASSERT_TRUE(report->written);
  ASSERT_TRUE(report->comparison.has_value());
  EXPECT_EQ(report->comparison->rows, 64);
  EXPECT_GT(report->comparison->mean_cosine, 0.999);
  // The written file is the same graph, with the metadata entry the engine reads.
  ::onnx::ModelProto written;
  std::ifstream in(options_.output_path, std::ios::binary);
  ASSERT_TRUE(written.ParseFromIstream(&in));
  ASSERT_EQ(written.metadata_props_size(), 1);
  EXPECT_EQ(written.metadata_props(0).key(), "brigade.precision");
  EXPECT_EQ(written.metadata_props(0).value(), "bf16");
  EXPECT_EQ(written.graph().node_size(), 3);
  const std::string text = report->Text(options_);
  EXPECT_THAT(text, HasSubstr("2 of 2 in bf16"));
  EXPECT_THAT(text, HasSubstr("bf16  Gemm"));
  EXPECT_THAT(report->Json(), HasSubstr("\"mode\":\"bf16\""));
  if (engine::onnx::CpuMultipliesBf16()) {
    // bf16 rounding moves the outputs, a little.
    EXPECT_GT(report->comparison->max_abs_diff, 0.0);
  } else {
    EXPECT_EQ(report->comparison->max_abs_diff, 0.0);
    EXPECT_THAT(text, HasSubstr("fp32 used"));
  }

  // Marking a marked file keeps one entry.
  options_.model_path = options_.output_path;
  options_.output_path = Path("again.onnx");
  ASSERT_TRUE(RunQuantizeJob(options_).ok());
  std::ifstream again_in(options_.output_path, std::ios::binary);
  ASSERT_TRUE(written.ParseFromIstream(&again_in));
  EXPECT_EQ(written.metadata_props_size(), 1);
}

TEST_F(QuantizeJobTest, ATwoInputModelIsJudgedOnRandomSamples) {
  // a, b [-1, 16] → Add → MatMul(16→4): a data set feeds one input, so --eval cannot serve it.
  OnnxBuilder b;
  b.Input("a", DataType::kFp32, {-1, 16});
  b.Input("b", DataType::kFp32, {-1, 16});
  b.Initializer("w", RandomTensor({16, 4}, 5));
  b.Node("Add", {"a", "b"}, {"s"});
  b.Node("MatMul", {"s", "w"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 4});
  options_.model_path = Path("two.onnx");
  std::ofstream(options_.model_path, std::ios::binary) << b.Serialize();
  options_.quantize.mode = QuantMode::kDynamic;
  options_.calibration_path.clear();

  QuantizeJobOptions with_data = options_;
  with_data.eval_path = data_;
  auto refused = RunQuantizeJob(with_data);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("--eval-random"));
  with_data.eval_random = 8;
  EXPECT_THAT(RunQuantizeJob(with_data).status().message(), HasSubstr("not both"));

  options_.eval_random = 40;
  auto report = RunQuantizeJob(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->evaluated);
  ASSERT_TRUE(report->comparison.has_value());
  EXPECT_EQ(report->comparison->rows, 40);
  EXPECT_GT(report->comparison->mean_cosine, 0.99);
  EXPECT_TRUE(report->written) << report->Text(options_);
  EXPECT_TRUE(report->fp32_us.has_value());
}

TEST_F(QuantizeJobTest, Bf16RefusesPerLayerChoices) {
  options_.quantize.mode = QuantMode::kBf16;
  QuantizeJobOptions o = options_;
  o.fallback = true;
  EXPECT_THAT(RunQuantizeJob(o).status().message(), HasSubstr("--fallback"));
  o = options_;
  o.quantize.exclude_nodes = {"n0"};
  auto excluded = RunQuantizeJob(o);
  EXPECT_EQ(excluded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(excluded.status().message(), HasSubstr("--exclude-node"));
}

TEST_F(QuantizeJobTest, RegisterPlacesTheWrittenModelInARepositoryUnlessItIsSlower) {
  const std::filesystem::path repo = dir_ / "repo";
  std::filesystem::create_directories(repo);
  options_.register_repository = repo.string();
  // The fake clock times both models at 0 us: INT8 is not faster, so only --force registers it.
  auto slower = RunQuantizeJob(options_);
  ASSERT_TRUE(slower.ok()) << slower.status();
  EXPECT_TRUE(slower->written);
  EXPECT_TRUE(slower->slower);
  EXPECT_FALSE(slower->registration.has_value());
  EXPECT_THAT(slower->Text(options_), HasSubstr("registered  no: not faster than fp32"));
  EXPECT_TRUE(std::filesystem::is_empty(repo));

  options_.force = true;
  auto forced = RunQuantizeJob(options_);
  ASSERT_TRUE(forced.ok()) << forced.status();
  ASSERT_TRUE(forced->registration.has_value());
  EXPECT_EQ(forced->registration->model_dir, (repo / "out").string());
  EXPECT_TRUE(std::filesystem::exists(repo / "out" / "1" / "model.onnx"));
  std::ifstream in(repo / "out" / "config.pbtxt");
  const std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(config, HasSubstr("name: \"out\""));
  EXPECT_THAT(config, HasSubstr("string_value: \"quantize static\""));
  EXPECT_THAT(config, HasSubstr("\"brigade_optimize.top1_agreement\""));

  options_.register_name = "../escape";
  EXPECT_THAT(RunQuantizeJob(options_).status().message(), HasSubstr("--register-name"));
}

TEST_F(QuantizeJobTest, BadInputsAreClearErrors) {
  QuantizeJobOptions o = options_;
  o.calibration_path.clear();
  EXPECT_THAT(RunQuantizeJob(o).status().message(), HasSubstr("--calibration"));

  o = options_;
  o.model_path = Path("missing.onnx");
  auto missing = RunQuantizeJob(o);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("missing.onnx"));

  o = options_;
  o.model_path = Path("garbage.onnx");
  std::ofstream(o.model_path) << "not a model";
  EXPECT_THAT(RunQuantizeJob(o).status().message(), HasSubstr("garbage.onnx"));

  o = options_;
  o.calibration_path = Path("wrong.npy");
  WriteNpy(o.calibration_path, RandomTensor({8, 5}, 1));
  auto wrong = RunQuantizeJob(o);
  EXPECT_THAT(wrong.status().message(), HasSubstr("--calibration"));
  EXPECT_THAT(wrong.status().message(), HasSubstr("wrong.npy"));
  EXPECT_THAT(wrong.status().message(), HasSubstr("'x'"));

  o = options_;
  o.eval_path = data_;
  o.eval_labels_path = Path("labels.npy");
  WriteNpy(o.eval_labels_path, RandomTensor({3}, 1));  // float labels
  EXPECT_THAT(RunQuantizeJob(o).status().message(), HasSubstr("--eval-labels"));

  o = options_;
  o.output_path = Path("no-such-dir/out.onnx");
  EXPECT_THAT(RunQuantizeJob(o).status().message(), HasSubstr("no-such-dir"));
}

}  // namespace
}  // namespace brigade::optimize
