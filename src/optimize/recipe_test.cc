#include "optimize/recipe.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::optimize {
namespace {

using ::testing::HasSubstr;

// The recipes' interpreter is replaced by /bin/sh running small shell scripts: what is under test
// is the process handling (arguments, output, exit codes, the deadline), not Python.
class RecipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    run_.python = "/bin/sh";
    run_.relay_stderr = false;
  }

  std::string Script(const std::string& name, const std::string& body) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << body;
    return path;
  }

  std::filesystem::path dir_;
  RecipeRun run_;
};

TEST_F(RecipeTest, ReturnsStdoutAndPassesArgumentsUnsplit) {
  run_.script = Script("echo.sh", "for a in \"$@\"; do echo \"[$a]\"; done\necho progress >&2\n");
  run_.args = {"--ratio", "0.5", "two words", "$HOME"};
  auto out = RunRecipe(run_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "[--ratio]\n[0.5]\n[two words]\n[$HOME]\n");
}

TEST_F(RecipeTest, ExitCodesBecomeStatusesWithTheLastStderrLine) {
  run_.script = Script("usage.sh",
                       "echo first >&2\necho 'prune: --ratio: 2 is not in (0, 1)' >&2\n"
                       "exit 2\n");
  auto usage = RunRecipe(run_);
  EXPECT_EQ(usage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(usage.status().message(), "prune: --ratio: 2 is not in (0, 1)");

  run_.script = Script("missing.sh", "echo 'prune: cannot import python3-torch' >&2\nexit 3\n");
  auto missing = RunRecipe(run_);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("python3-torch"));

  run_.script = Script("unsupported.sh",
                       "echo 'node Softmax is not one the recipes read' >&2\n"
                       "exit 4\n");
  EXPECT_EQ(RunRecipe(run_).status().code(), absl::StatusCode::kInvalidArgument);

  run_.script = Script("crash.sh", "echo 'ValueError: boom' >&2\nexit 1\n");
  auto crash = RunRecipe(run_);
  EXPECT_EQ(crash.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(crash.status().message(), HasSubstr("crash.sh failed (exit 1): ValueError: boom"));
}

TEST_F(RecipeTest, MissingInterpreterNamesThePythonFlag) {
  run_.python = (dir_ / "no-such-python").string();
  run_.script = Script("any.sh", "exit 0\n");
  auto out = RunRecipe(run_);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(out.status().message(), HasSubstr("--python"));
  EXPECT_THAT(out.status().message(), HasSubstr("no-such-python"));
}

TEST_F(RecipeTest, RecipePastItsTimeoutIsKilled) {
  // The child's own child (sleep) holds the pipes too: the whole process group must go.
  run_.script = Script("slow.sh", "sleep 30\necho never\n");
  run_.timeout = absl::Milliseconds(200);
  const int64_t start_ns = Clock::Real()->NowNs();
  auto out = RunRecipe(run_);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out.status().message(), HasSubstr("--recipe-timeout"));
  EXPECT_LT(Clock::Real()->NowNs() - start_ns, 10'000'000'000);
}

TEST_F(RecipeTest, RecipeThatClosesItsOutputAndLingersIsStillBounded) {
  // The pipes reach EOF at once; the exit is what the deadline must still bound.
  run_.script = Script("linger.sh", "exec >&- 2>&-\nsleep 30\n");
  run_.timeout = absl::Milliseconds(300);
  const int64_t start_ns = Clock::Real()->NowNs();
  auto out = RunRecipe(run_);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(Clock::Real()->NowNs() - start_ns, 10'000'000'000);
}

TEST_F(RecipeTest, FindsRecipesInTheFlagFolderOrBesideTheBinary) {
  std::filesystem::create_directories(dir_ / "mine");
  Script("mine/prune.py", "");
  auto flagged = FindRecipe("prune.py", (dir_ / "mine").string(), "/nowhere/brigade");
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  EXPECT_EQ(*flagged, (dir_ / "mine" / "prune.py").string());

  // The build tree: <root>/build/brigade and <root>/scripts/optimize/.
  std::filesystem::create_directories(dir_ / "root" / "build");
  std::filesystem::create_directories(dir_ / "root" / "scripts" / "optimize");
  Script("root/scripts/optimize/distill.py", "");
  auto beside = FindRecipe("distill.py", "", (dir_ / "root" / "build" / "brigade").string());
  ASSERT_TRUE(beside.ok()) << beside.status();
  EXPECT_EQ(*beside, (dir_ / "root" / "scripts" / "optimize" / "distill.py").string());

  auto absent = FindRecipe("prune.py", "", (dir_ / "root" / "build" / "brigade").string());
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(absent.status().message(), HasSubstr("--recipe-dir"));
  EXPECT_THAT(absent.status().message(), HasSubstr("scripts/optimize/prune.py"));
}

}  // namespace
}  // namespace brigade::optimize
