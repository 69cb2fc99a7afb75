#include "optimize/register.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::optimize {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSourceConfig[] = R"(name: "fm"
platform: "onnxruntime_onnx"
max_batch_size: 8
output [
  {
    name: "logits"
    label_filename: "labels.txt"
  }
]
)";

class RegisterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "source" / "fm" / "1");
    fs::create_directories(dir_ / "repo");
    Write("source/fm/config.pbtxt", kSourceConfig);
    Write("source/fm/labels.txt", "a\nb\n");
    Write("source/fm/1/model.onnx", "fp32 bytes");
    Write("pruned.onnx", "pruned bytes");
    Write("pruned.pt", "torchscript bytes");
    options_.repository = Path("repo");
    options_.model_name = "fm_pruned";
    options_.model_file = Path("pruned.onnx");
    options_.torchscript_file = Path("pruned.pt");
    options_.source_model_path = Path("source/fm/1/model.onnx");
    options_.fields = {{"accuracy_top1", "0.9100"}, {"latency_us_batch1", "30.5"}};
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
  }
  std::string Read(const std::string& name) const {
    std::ifstream in(Path(name), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::vector<std::string> Entries(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(Path(name))) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
  RegisterOptions options_;
};

TEST_F(RegisterTest, NewModelGetsTheSourceConfigRenamedItsLabelsAndTheMeasurements) {
  auto r = RegisterVariant(options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->new_model);
  EXPECT_EQ(r->version, 1);
  EXPECT_EQ(Entries("repo"), (std::vector<std::string>{"fm_pruned"}));
  EXPECT_EQ(Entries("repo/fm_pruned"),
            (std::vector<std::string>{"1", "config.pbtxt", "labels.txt"}));
  EXPECT_EQ(Read("repo/fm_pruned/1/model.onnx"), "pruned bytes");
  EXPECT_EQ(Read("repo/fm_pruned/1/model.pt"), "torchscript bytes");
  const std::string config = Read("repo/fm_pruned/config.pbtxt");
  EXPECT_THAT(config, HasSubstr("name: \"fm_pruned\"\nplatform: \"onnxruntime_onnx\""));
  EXPECT_THAT(config, Not(HasSubstr("name: \"fm\"\n")));
  EXPECT_THAT(config, HasSubstr("    name: \"logits\""));  // nested names stay
  EXPECT_THAT(config, HasSubstr("key: \"brigade_optimize.version\"\n  value { string_value: "
                                "\"1\" }"));
  EXPECT_THAT(config, HasSubstr("key: \"brigade_optimize.accuracy_top1\"\n  value { "
                                "string_value: \"0.9100\" }"));
}

TEST_F(RegisterTest, ExistingModelGetsTheNextVersionAndFreshMeasurements) {
  ASSERT_TRUE(RegisterVariant(options_).ok());
  fs::create_directories(dir_ / "repo" / "fm_pruned" / "7");
  options_.fields = {{"accuracy_top1", "0.8800"}};
  auto r = RegisterVariant(options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->new_model);
  EXPECT_EQ(r->version, 8);
  EXPECT_EQ(Read("repo/fm_pruned/8/model.onnx"), "pruned bytes");
  const std::string config = Read("repo/fm_pruned/config.pbtxt");
  EXPECT_THAT(config, HasSubstr("string_value: \"0.8800\""));
  EXPECT_THAT(config, Not(HasSubstr("0.9100")));  // the block is replaced, not appended
  EXPECT_THAT(config, HasSubstr("string_value: \"8\""));
  // Nothing but versions, the config and the labels: no assembly folder or temporary config.
  EXPECT_EQ(Entries("repo/fm_pruned"),
            (std::vector<std::string>{"1", "7", "8", "config.pbtxt", "labels.txt"}));
}

TEST_F(RegisterTest, SourceOutsideARepositoryGetsAMinimalOnnxConfig) {
  options_.source_model_path = Path("pruned.onnx");
  options_.torchscript_file.clear();
  auto r = RegisterVariant(options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Entries("repo/fm_pruned"), (std::vector<std::string>{"1", "config.pbtxt"}));
  EXPECT_THAT(Read("repo/fm_pruned/config.pbtxt"),
              HasSubstr("name: \"fm_pruned\"\nplatform: \"onnxruntime_onnx\"\n"));
}

TEST_F(RegisterTest, NamesOutsideTheRepositoryAreRefusedAndNothingIsWritten) {
  for (const char* name : {"../escape", "a/b", "..", ".hidden", ""}) {
    options_.model_name = name;
    auto r = RegisterVariant(options_);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(r.status().message(), HasSubstr("--register-name")) << name;
  }
  fs::create_directories(dir_ / "elsewhere");
  fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "repo" / "link");
  options_.model_name = "link";
  auto link = RegisterVariant(options_);
  EXPECT_THAT(link.status().message(), HasSubstr("resolves outside the repository"));
  EXPECT_TRUE(fs::is_empty(dir_ / "elsewhere"));

  options_.model_name = "fm_pruned";
  options_.repository = Path("no-repo");
  EXPECT_THAT(RegisterVariant(options_).status().message(), HasSubstr("--register:"));
  EXPECT_EQ(Entries("repo"), (std::vector<std::string>{"link"}));
}

TEST_F(RegisterTest, FailedCopyLeavesNoModelBehind) {
  options_.model_file = Path("missing.onnx");
  auto r = RegisterVariant(options_);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(Entries("repo").empty());
}

TEST_F(RegisterTest, ExistingNonOnnxModelIsNotGivenAnOnnxVersion) {
  fs::create_directories(dir_ / "repo" / "fm_pruned" / "1");
  Write("repo/fm_pruned/config.pbtxt", "name: \"fm_pruned\"\nplatform: \"pytorch_libtorch\"\n");
  auto r = RegisterVariant(options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("is not an ONNX model"));
  EXPECT_EQ(Entries("repo/fm_pruned"), (std::vector<std::string>{"1", "config.pbtxt"}));
}

}  // namespace
}  // namespace brigade::optimize
