#include "optimize/gate.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimize/model_runner.h"
#include "optimize/test_util/npy_writer.h"
#include "optimize/test_util/small_models.h"

namespace brigade::optimize {
namespace {

using engine::onnx::OnnxBuilder;
using engine::onnx::RandomTensor;
using ::testing::HasSubstr;

using test_util::Mlp;

class GateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    Write("reference.onnx", reference_.Serialize());
    eval_ = Path("eval.npy");
    test_util::WriteNpy(eval_, RandomTensor({64, 8}, 5));
    options_.reference_path = Path("reference.onnx");
    options_.eval_path = eval_;
    options_.time_iterations = 2;
    options_.clock = &clock_;
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& bytes) const {
    std::ofstream(Path(name), std::ios::binary) << bytes;
  }

  // Labels that make the reference right on every row: its own arg-max.
  std::string ReferenceLabels() const {
    ::onnx::ModelProto model;
    model.ParseFromString(reference_.Serialize());
    auto runner = ModelRunner::Create(model, "reference", dir_.string(), 1);
    EXPECT_TRUE(runner.ok()) << runner.status();
    auto samples = LoadSamplesForTest();
    auto out = (*runner)->RunAll(samples, 16);
    EXPECT_TRUE(out.ok()) << out.status();
    std::vector<int64_t> labels;
    const std::span<const float> v = out->values<float>();
    for (int64_t r = 0; r < 64; ++r) {
      labels.push_back(std::max_element(v.begin() + r * 3, v.begin() + r * 3 + 3) -
                       (v.begin() + r * 3));
    }
    const std::string path = Path("labels.npy");
    test_util::WriteNpyLabels(path, labels);
    return path;
  }
  static Tensor LoadSamplesForTest() { return RandomTensor({64, 8}, 5); }

  std::filesystem::path dir_;
  Mlp reference_ = Mlp::Prunable();
  std::string eval_;
  FakeClock clock_;
  GateOptions options_;
};

TEST_F(GateTest, PrunedModelWithTheSameOutputsPassesAndListsTheNarrowerLayer) {
  Write("pruned.onnx", reference_.FirstHidden(4).Serialize());
  options_.candidate_path = Path("pruned.onnx");
  options_.eval_labels_path = ReferenceLabels();
  auto report = GateCandidate(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->passed);
  EXPECT_EQ(report->comparison.rows, 64);
  EXPECT_DOUBLE_EQ(report->comparison.top1_agreement, 1.0);
  EXPECT_DOUBLE_EQ(*report->comparison.reference_top1, 1.0);
  EXPECT_DOUBLE_EQ(report->comparison.drop_points(), 0.0);
  ASSERT_EQ(report->widths.size(), 2u);
  EXPECT_EQ(report->widths[0].reference_node, "fc1");
  EXPECT_EQ(report->widths[0].reference, 6);
  EXPECT_EQ(report->widths[0].candidate, 4);
  EXPECT_EQ(report->widths[1].reference, 3);
  EXPECT_EQ(report->widths[1].candidate, 3);
  EXPECT_EQ(report->reference_parameters, 8 * 6 + 6 + 6 * 3 + 3);
  EXPECT_EQ(report->candidate_parameters, 8 * 4 + 4 + 4 * 3 + 3);
  ASSERT_EQ(report->timings.size(), 2u);
  EXPECT_EQ(report->timings[0].batch, 1);
  EXPECT_EQ(report->timings[1].batch, 8);
}

TEST_F(GateTest, CandidateThatLosesAccuracyFailsTheGateWithoutAnError) {
  Write("other.onnx", Mlp::Random(4, 3, 11).Serialize());
  options_.candidate_path = Path("other.onnx");
  options_.eval_labels_path = ReferenceLabels();
  auto report = GateCandidate(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->passed);
  EXPECT_GT(report->comparison.drop_points(), options_.max_accuracy_drop);
  // A gate as loose as the drop lets the same candidate through.
  options_.max_accuracy_drop = report->comparison.drop_points();
  auto loose = GateCandidate(options_);
  ASSERT_TRUE(loose.ok()) << loose.status();
  EXPECT_TRUE(loose->passed);
}

TEST_F(GateTest, WithoutLabelsTheGateComparesAgreement) {
  Write("other.onnx", Mlp::Random(4, 3, 11).Serialize());
  options_.candidate_path = Path("other.onnx");
  auto report = GateCandidate(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->comparison.reference_top1.has_value());
  EXPECT_DOUBLE_EQ(report->comparison.drop_points(), (1 - report->comparison.top1_agreement) * 100);
}

TEST_F(GateTest, BadInputsAreErrorsNamingTheFlagOrFile) {
  // Four outputs per row where the reference has three.
  Write("wide.onnx", Mlp::Random(6, 4, 21).Serialize());
  options_.candidate_path = Path("wide.onnx");
  auto wide = GateCandidate(options_);
  EXPECT_EQ(wide.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wide.status().message(), HasSubstr("4 outputs per row"));

  options_.candidate_path = Path("missing.onnx");
  auto missing = GateCandidate(options_);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr(Path("missing.onnx")));

  options_.candidate_path = Path("reference.onnx");
  options_.eval_path.clear();
  EXPECT_THAT(GateCandidate(options_).status().message(), HasSubstr("--eval:"));
  options_.eval_labels_path = Path("labels.npy");
  EXPECT_THAT(GateCandidate(options_).status().message(), HasSubstr("--eval-labels:"));

  options_.eval_path = eval_;
  options_.eval_labels_path.clear();
  test_util::WriteNpy(Path("narrow.npy"), RandomTensor({64, 5}, 6));
  options_.eval_path = Path("narrow.npy");
  EXPECT_THAT(GateCandidate(options_).status().message(), HasSubstr("--eval:"));
}

TEST(WeightLayersTest, ReadsOutputWidthsOfConvGemmAndMatMul) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 2, 4, 4});
  b.Initializer("k", RandomTensor({5, 2, 3, 3}, 1));
  b.Initializer("wt", RandomTensor({7, 80}, 2));  // transB: [out, in]
  b.Initializer("w", RandomTensor({7, 3}, 3));    // MatMul: [in, out]
  b.Node("Conv", {"x", "k"}, {"c"}).set_name("conv");
  b.Node("Flatten", {"c"}, {"f"});
  OnnxBuilder::SetInt(b.Node("Gemm", {"f", "wt"}, {"g"}), "transB", 1);
  b.Node("MatMul", {"g", "w"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 3});
  const std::vector<WeightLayer> layers = WeightLayers(b.model());
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].node, "conv");
  EXPECT_EQ(layers[0].op_type, "Conv");
  EXPECT_EQ(layers[0].width, 5);
  EXPECT_EQ(layers[1].width, 7);
  EXPECT_EQ(layers[2].width, 3);
}

}  // namespace
}  // namespace brigade::optimize
