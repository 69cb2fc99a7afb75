#include "repository/warmup.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "protocol/model_config_parser.h"

namespace brigade::repository {
namespace {

namespace fs = std::filesystem;

config::ModelConfig Config(const std::string& text) {
  absl::StatusOr<protocol::ParsedConfig> parsed =
      protocol::ParseModelConfigText(text, "config.pbtxt");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? parsed->config : config::ModelConfig();
}

// "x": FP32 [-1, 4] (batched); "bias": FP32 [-1, 4], optional (the model has a default).
engine::ModelSignature Signature() {
  engine::ModelSignature signature;
  signature.inputs.push_back({"x", DataType::kFp32, {-1, 4}, false});
  signature.inputs.push_back({"bias", DataType::kFp32, {-1, 4}, true});
  signature.outputs.push_back({"y", DataType::kFp32, {-1, 4}, false});
  return signature;
}

// One `inputs` entry of a warm-up: `name`, [4] elements a row of `data_type`, its data from
// `data` (a data field of ModelWarmup.Input).
std::string Input(const std::string& name, const std::string& data,
                  const std::string& data_type = "TYPE_FP32") {
  return "inputs { key: \"" + name + "\" value { data_type: " + data_type + " dims: [ 4 ] " + data +
         " } } ";
}

// Model "m" with one warm-up entry "w" of `inputs` at `batch_size`, `count` times.
std::string WarmupConfig(const std::string& inputs, int batch_size = 3, int count = 2,
                         int max_batch_size = 8) {
  return "name: \"m\" max_batch_size: " + std::to_string(max_batch_size) +
         " model_warmup { name: \"w\" batch_size: " + std::to_string(batch_size) +
         " count: " + std::to_string(count) + " " + inputs + "}";
}

class WarmupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("brigade_warmup_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "warmup");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void WriteFloats(const std::string& name, const std::vector<float>& values) {
    std::ofstream(dir_ / "warmup" / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(values.data()),
               static_cast<std::streamsize>(values.size() * sizeof(float)));
  }

  fs::path dir_;
};

TEST_F(WarmupTest, WithoutModelWarmupZerosRunAtOneRowAndAtMaxBatchSize) {
  absl::StatusOr<WarmupPlan> plan =
      BuildWarmupPlan(Config(R"pb(name: "m" max_batch_size: 8)pb"), Signature(), dir_.string());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->runs.size(), 2u);
  // The signature's shapes are exact: a model failing them fails every request like them.
  EXPECT_TRUE(plan->runs[0].required);
  EXPECT_TRUE(plan->runs[1].required);
  EXPECT_EQ(plan->runs[0].inputs[0].shape(), (Shape{1, 4}));
  EXPECT_EQ(plan->runs[1].inputs[0].shape(), (Shape{8, 4}));
  EXPECT_EQ(plan->runs[0].name, "zeros at batch size 1");
  EXPECT_EQ(plan->runs[1].name, "zeros at batch size 8");
  for (float value : plan->runs[1].inputs[0].values<float>()) EXPECT_EQ(value, 0.0f);
}

// Zeros at a guessed shape (a variable dimension set to 1) or empty strings are no request the
// model must take: their failure is logged, the version still loads.
TEST_F(WarmupTest, AnAutomaticRunAtAGuessedShapeOrOfEmptyStringsIsBestEffort) {
  for (const auto& [dtype, shape] : {std::pair{DataType::kFp32, Shape{-1, 3, -1, -1}},
                                     std::pair{DataType::kBytes, Shape{-1, 1}}}) {
    engine::ModelSignature signature;
    signature.inputs.push_back({"x", dtype, shape, false});
    absl::StatusOr<WarmupPlan> plan =
        BuildWarmupPlan(Config(R"pb(name: "m" max_batch_size: 8)pb"), signature, dir_.string());
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_EQ(plan->runs.size(), 2u);
    EXPECT_FALSE(plan->runs[0].required) << ShapeToString(shape);
    EXPECT_FALSE(plan->runs[1].required) << ShapeToString(shape);
  }
}

TEST_F(WarmupTest, EachEntryRunsCountTimesAtItsBatchSizeAndIsRequired) {
  absl::StatusOr<WarmupPlan> plan = BuildWarmupPlan(
      Config(WarmupConfig(Input("x", "zero_data: true") + Input("bias", "zero_data: true"))),
      Signature(), dir_.string());
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const scheduler::WarmupRun& run : plan->runs) EXPECT_TRUE(run.required);
  ASSERT_EQ(plan->runs.size(), 2u);
  EXPECT_EQ(plan->runs[0].name, "w");
  EXPECT_EQ(plan->runs[1].name, "w");
  ASSERT_EQ(plan->runs[0].inputs.size(), 2u);  // signature order: x, bias
  EXPECT_EQ(plan->runs[0].inputs[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(plan->runs[0].inputs[1].shape(), (Shape{3, 4}));
  for (float value : plan->runs[1].inputs[0].values<float>()) EXPECT_EQ(value, 0.0f);
}

TEST_F(WarmupTest, RandomFloatsLieInZeroToOneAndAreNotAllZero) {
  absl::StatusOr<WarmupPlan> plan = BuildWarmupPlan(
      Config(WarmupConfig(Input("x", "random_data: true"), /*batch_size=*/8, /*count=*/1)),
      Signature(), dir_.string());
  ASSERT_TRUE(plan.ok()) << plan.status();
  int nonzero = 0;
  for (float value : plan->runs[0].inputs[0].values<float>()) {
    EXPECT_GE(value, 0.0f);
    EXPECT_LT(value, 1.0f);
    nonzero += value != 0.0f;
  }
  EXPECT_GT(nonzero, 0);
}

TEST_F(WarmupTest, AnInputDataFileIsReadFromTheWarmupFolderAsRawBytes) {
  std::vector<float> values(4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i);
  WriteFloats("x.bin", values);
  absl::StatusOr<WarmupPlan> plan =
      BuildWarmupPlan(Config(WarmupConfig(Input("x", R"(input_data_file: "x.bin")"), 1, 1)),
                      Signature(), dir_.string());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::span<const float> read = plan->runs[0].inputs[0].values<float>();
  EXPECT_EQ(std::vector<float>(read.begin(), read.end()), values);
}

TEST_F(WarmupTest, AMissingDataFileIsNotFoundNamingTheFile) {
  absl::StatusOr<WarmupPlan> plan =
      BuildWarmupPlan(Config(WarmupConfig(Input("x", R"(input_data_file: "absent.bin")"))),
                      Signature(), dir_.string());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "absent.bin")) << plan.status();
}

TEST_F(WarmupTest, ADataFileOutsideTheWarmupFolderIsRefused) {
  WriteFloats("x.bin", {1.0f, 2.0f, 3.0f, 4.0f});
  absl::StatusOr<WarmupPlan> plan = BuildWarmupPlan(
      Config(WarmupConfig(Input("x", R"(input_data_file: "../warmup/x.bin")"), 1, 1)), Signature(),
      dir_.string());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "without a path")) << plan.status();
}

TEST_F(WarmupTest, ADataFileOfTheWrongSizeIsRefusedNamingTheWarmupAndTheInput) {
  WriteFloats("short.bin", {1.0f, 2.0f});  // 3 rows of 4 floats were asked for
  absl::StatusOr<WarmupPlan> plan =
      BuildWarmupPlan(Config(WarmupConfig(Input("x", R"(input_data_file: "short.bin")"))),
                      Signature(), dir_.string());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "warm-up 'w'")) << plan.status();
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "'x'")) << plan.status();
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "short.bin")) << plan.status();
}

TEST_F(WarmupTest, ADataTypeOtherThanTheModelsIsRefusedNamingTheInput) {
  const std::string text = WarmupConfig(Input("x", "zero_data: true", "TYPE_INT32"), 1, 1);
  absl::StatusOr<WarmupPlan> plan = BuildWarmupPlan(Config(text), Signature(), dir_.string());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "input 'x' is INT32")) << plan.status();
}

TEST_F(WarmupTest, AnEntryMustNameEveryRequiredInput) {
  const std::string text = WarmupConfig(Input("bias", "zero_data: true"), 1, 1);
  absl::StatusOr<WarmupPlan> plan = BuildWarmupPlan(Config(text), Signature(), dir_.string());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(plan.status().message(), "model 'm': warm-up 'w' has no input 'x'");
}

TEST_F(WarmupTest, AnEntryMayOmitAnOptionalInputWhichRunsAsARequestOmittingIt) {
  absl::StatusOr<WarmupPlan> plan = BuildWarmupPlan(
      Config(WarmupConfig(Input("x", "zero_data: true"))), Signature(), dir_.string());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->runs[0].inputs.size(), 2u);
  EXPECT_EQ(plan->runs[0].inputs[0].shape(), (Shape{3, 4}));
  EXPECT_TRUE(plan->runs[0].inputs[1].empty());  // "bias": the model's default
}

TEST_F(WarmupTest, AModelThatDoesNotBatchGetsNoBatchDimension) {
  engine::ModelSignature signature;
  signature.inputs.push_back({"x", DataType::kFp32, {4}, false});
  const std::string text =
      WarmupConfig(Input("x", "zero_data: true"), /*batch_size=*/5, /*count=*/1,
                   /*max_batch_size=*/0);
  absl::StatusOr<WarmupPlan> plan = BuildWarmupPlan(Config(text), signature, dir_.string());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->runs[0].inputs[0].shape(), (Shape{4}));
}

// Nothing is allocated for a run past the bound: before the bound this allocated 1 GiB of zeros
// for the max_batch_size run (and, at larger sizes, threw std::bad_alloc through the load).
TEST_F(WarmupTest, AnAutomaticRunPastTheBoundIsSkippedWithANote) {
  engine::ModelSignature signature;
  signature.inputs.push_back({"x", DataType::kFp32, {-1, 4096}, false});
  absl::StatusOr<WarmupPlan> plan =
      BuildWarmupPlan(Config(R"pb(name: "m" max_batch_size: 65536)pb"), signature, dir_.string());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->runs.size(), 1u);
  EXPECT_EQ(plan->runs[0].name, "zeros at batch size 1");
  ASSERT_EQ(plan->skipped.size(), 1u);
  EXPECT_TRUE(absl::StrContains(plan->skipped[0], "zeros at batch size 65536")) << plan->skipped[0];
  EXPECT_TRUE(absl::StrContains(plan->skipped[0], "more than 268435456 bytes")) << plan->skipped[0];
}

TEST_F(WarmupTest, AConfiguredInputPastTheBoundFailsBeforeAnythingIsAllocated) {
  auto input = [](const std::string& dims, const std::string& type) {
    return "inputs { key: \"x\" value { data_type: " + type + " dims: [ " + dims +
           " ] zero_data: true } }";
  };
  engine::ModelSignature signature;
  signature.inputs.push_back({"x", DataType::kFp32, {-1, -1}, false});
  // 512 MiB of FP32 (which used to be allocated), then 2^40 strings (which used to throw).
  absl::StatusOr<WarmupPlan> plan = BuildWarmupPlan(
      Config(WarmupConfig(input("134217728", "TYPE_FP32"), 1, 1)), signature, dir_.string());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted) << plan.status();
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "warm-up 'w' input 'x' [1,134217728]"))
      << plan.status();
  signature.inputs[0].dtype = DataType::kBytes;
  plan = BuildWarmupPlan(Config(WarmupConfig(input("1099511627776", "TYPE_STRING"), 1, 1)),
                         signature, dir_.string());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted) << plan.status();
  // Dims whose product overflows are refused as such.
  plan = BuildWarmupPlan(
      Config(WarmupConfig(input("4611686018427387904, 4611686018427387904", "TYPE_STRING"), 1, 1)),
      signature, dir_.string());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
}

TEST_F(WarmupTest, ADataFileLongerThanItsTensorIsRefusedUnread) {
  WriteFloats("long.bin", std::vector<float>(1000, 1.0f));  // 1 row of 4 floats was asked for
  absl::StatusOr<WarmupPlan> plan =
      BuildWarmupPlan(Config(WarmupConfig(Input("x", R"(input_data_file: "long.bin")"), 1, 1)),
                      Signature(), dir_.string());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "larger than 16 bytes")) << plan.status();
}

}  // namespace
}  // namespace brigade::repository
