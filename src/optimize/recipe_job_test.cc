#include "optimize/recipe_job.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/strings.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimize/test_util/npy_writer.h"
#include "optimize/test_util/small_models.h"

namespace brigade::optimize {
namespace {

using engine::onnx::RandomTensor;
using test_util::Mlp;
using ::testing::HasSubstr;

// The recipe is a shell script standing in for prune.py (run by /bin/sh as the "python"): it
// records its arguments and exports recipes/candidate_source.onnx, the model each test chooses,
// as the recipe's ONNX output. What is under test is the job around the recipe: flags, the work
// folder, the gate, the renames.
constexpr char kFakeRecipe[] = R"(here=$(dirname "$0")
echo "$@" > "$here/args.txt"
while [ $# -gt 0 ]; do
  case "$1" in
    --onnx-out) out="$2"; shift ;;
    --torchscript-out) ts="$2"; shift ;;
  esac
  shift
done
cp "$here/candidate_source.onnx" "$out"
if [ -n "$ts" ]; then echo torchscript > "$ts"; fi
echo progress >&2
echo '{"recipe": "prune"}'
)";

class RecipeJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    for (const char* sub : {"recipes", "data", "out"}) {
      std::filesystem::create_directories(dir_ / sub);
    }
    WriteFile("data/reference.onnx", reference_.Serialize());
    WriteFile("recipes/prune.py", kFakeRecipe);
    test_util::WriteNpy(Path("data/train.npy"), RandomTensor({16, 8}, 7));
    test_util::WriteNpyLabels(Path("data/train_labels.npy"), std::vector<int64_t>(16, 0));
    test_util::WriteNpy(Path("data/eval.npy"), RandomTensor({64, 8}, 5));
    options_.kind = RecipeKind::kPrune;
    options_.model_path = Path("data/reference.onnx");
    options_.output_path = Path("out/pruned.onnx");
    options_.torchscript_path = Path("out/pruned.pt");
    options_.recipe_args = {"--ratio", "0.25"};
    options_.train_path = Path("data/train.npy");
    options_.train_labels_path = Path("data/train_labels.npy");
    options_.eval_path = Path("data/eval.npy");
    options_.python = "/bin/sh";
    options_.recipe_dir = Path("recipes");
    options_.relay_progress = false;
    options_.time_iterations = 2;
    options_.clock = &clock_;
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void WriteFile(const std::string& name, const std::string& bytes) const {
    std::ofstream(Path(name), std::ios::binary) << bytes;
  }
  std::string ReadFile(const std::string& name) const {
    std::ifstream in(Path(name), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::vector<std::string> OutFiles() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_ / "out")) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::filesystem::path dir_;
  Mlp reference_ = Mlp::Prunable();
  FakeClock clock_;
  RecipeJobOptions options_;
};

TEST_F(RecipeJobTest, PassingCandidateIsRenamedOntoTheOutputsAndNothingElseIsLeft) {
  const std::string pruned = reference_.FirstHidden(4).Serialize();
  WriteFile("recipes/candidate_source.onnx", pruned);
  auto report = RunRecipeJob(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->gate.passed);
  EXPECT_TRUE(report->written);
  EXPECT_EQ(OutFiles(), (std::vector<std::string>{"pruned.onnx", "pruned.pt"}));
  EXPECT_EQ(ReadFile("out/pruned.onnx"), pruned);
  EXPECT_EQ(ReadFile("out/pruned.pt"), "torchscript\n");
  ASSERT_EQ(report->gate.widths.size(), 2u);
  EXPECT_EQ(report->gate.widths[0].candidate, 4);
  EXPECT_EQ(report->recipe_summary, R"({"recipe": "prune"})");
  EXPECT_THAT(report->Json(), HasSubstr(R"("recipe":{"recipe": "prune"})"));
  EXPECT_THAT(report->Text(options_), HasSubstr("Gemm      6 -> 4     fc1"));
  EXPECT_THAT(report->Text(options_), HasSubstr("gate        passed"));
  // The recipe got the model, its own flags and the data, and wrote nowhere but the work folder.
  const std::string args = ReadFile("recipes/args.txt");
  EXPECT_THAT(args, HasSubstr(StrCat(options_.model_path, " --ratio 0.25 --train ")));
  EXPECT_THAT(args, HasSubstr(StrCat("--train-labels ", options_.train_labels_path)));
  EXPECT_THAT(args, HasSubstr(StrCat("--onnx-out ", Path("out/.pruned.onnx.work."))));
}

TEST_F(RecipeJobTest, GateMissWritesNothingUnlessForced) {
  WriteFile("recipes/candidate_source.onnx", Mlp::Random(4, 3, 11).Serialize());
  auto refused = RunRecipeJob(options_);
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE(refused->gate.passed);
  EXPECT_FALSE(refused->written);
  EXPECT_TRUE(OutFiles().empty());
  EXPECT_THAT(refused->Text(options_), HasSubstr("output      not written"));

  options_.force = true;
  auto forced = RunRecipeJob(options_);
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_TRUE(forced->written);
  EXPECT_EQ(OutFiles(), (std::vector<std::string>{"pruned.onnx", "pruned.pt"}));
  EXPECT_THAT(forced->Text(options_), HasSubstr("written because of --force"));
}

TEST_F(RecipeJobTest, RecipeFailureLeavesNothingBehind) {
  WriteFile("recipes/prune.py",
            "echo 'prune: cannot import python3-torch' >&2\ntouch \"$(dirname \"$0\")/ran\"\n"
            "exit 3\n");
  auto report = RunRecipeJob(options_);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(report.status().message(), HasSubstr("python3-torch"));
  EXPECT_TRUE(std::filesystem::exists(Path("recipes/ran")));
  EXPECT_TRUE(OutFiles().empty());
}

TEST_F(RecipeJobTest, RegistersTheWrittenModelWithTheGatesMeasurements) {
  WriteFile("recipes/candidate_source.onnx", reference_.FirstHidden(4).Serialize());
  std::filesystem::create_directories(dir_ / "repo");
  options_.register_repository = Path("repo");
  // The fake clock times both models at 0 us: not faster, so registered only with --force.
  auto slow = RunRecipeJob(options_);
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_TRUE(slow->written);
  EXPECT_FALSE(slow->registration.has_value());
  EXPECT_THAT(slow->Text(options_), HasSubstr("registered  no: not faster than fp32"));
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "repo"));

  options_.force = true;
  auto report = RunRecipeJob(options_);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(report->registration.has_value());
  EXPECT_EQ(report->registration->model_dir, Path("repo/pruned"));  // -o's stem
  EXPECT_EQ(report->registration->version, 1);
  EXPECT_EQ(ReadFile("repo/pruned/1/model.onnx"), ReadFile("out/pruned.onnx"));
  const std::string config = ReadFile("repo/pruned/config.pbtxt");
  EXPECT_THAT(config, HasSubstr("name: \"pruned\""));
  EXPECT_THAT(config, HasSubstr("\"brigade_optimize.recipe\"\n  value { string_value: \"prune "
                                "--ratio 0.25\" }"));
  EXPECT_THAT(config, HasSubstr("\"brigade_optimize.drop_points\""));
  EXPECT_THAT(config, HasSubstr("\"brigade_optimize.latency_us_batch8\""));
  EXPECT_THAT(report->Json(), HasSubstr("\"registered\":{\"model_dir\":"));

  // A name that leaves the repository is refused before anything is trained.
  std::filesystem::remove(Path("recipes/args.txt"));
  options_.register_name = "../outside";
  auto outside = RunRecipeJob(options_);
  EXPECT_THAT(outside.status().message(), HasSubstr("--register-name"));
  EXPECT_FALSE(std::filesystem::exists(Path("recipes/args.txt")));
}

TEST_F(RecipeJobTest, BadInputIsAnErrorNamingTheFlagBeforeTheRecipeRuns) {
  auto expect_error = [this](RecipeJobOptions o, std::string_view text) {
    auto report = RunRecipeJob(o);
    EXPECT_FALSE(report.ok()) << text;
    EXPECT_THAT(report.status().message(), HasSubstr(text));
    EXPECT_FALSE(std::filesystem::exists(Path("recipes/args.txt"))) << text;
  };
  RecipeJobOptions o = options_;
  o.output_path = Path("absent/pruned.onnx");
  expect_error(o, "-o: directory");
  o = options_;
  o.torchscript_path = Path("absent/pruned.pt");
  expect_error(o, "--torchscript: directory");
  o = options_;
  o.train_path.clear();
  expect_error(o, "--train: a training set");
  o = options_;
  o.train_labels_path = Path("data/none.npy");
  expect_error(o, "--train-labels: cannot read");
  o = options_;
  o.eval_path.clear();
  expect_error(o, "--eval: an evaluation set");
  o = options_;
  o.model_path = Path("data/none.onnx");
  expect_error(o, "cannot read model");
  o = options_;
  o.recipe_dir = Path("data");
  expect_error(o, "--recipe-dir: recipe 'prune.py' not found");
  EXPECT_TRUE(OutFiles().empty());
}

}  // namespace
}  // namespace brigade::optimize
