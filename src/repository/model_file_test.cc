#include "repository/model_file.h"

#include <unistd.h>

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::repository {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ModelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("model-file-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "sub");
    std::ofstream(dir_ / "labels.txt") << "cat\r\ndog\n";
    std::ofstream(dir_.parent_path() / "outside.txt") << "secret\n";
    std::filesystem::create_symlink(dir_.parent_path() / "outside.txt", dir_ / "link.txt");
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    std::filesystem::remove(dir_.parent_path() / "outside.txt");
  }
  std::filesystem::path dir_;
};

TEST_F(ModelFileTest, ReadsAPlainFileOrALinkAndSplitsLabels) {
  absl::StatusOr<std::string> text = ReadModelFile(dir_, "labels.txt", "label_filename");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(SplitLabels(*text), ElementsAre("cat", "dog"));
  EXPECT_THAT(SplitLabels("a\n\nb"), ElementsAre("a", "", "b"));
  // A link is followed, wherever it points.
  EXPECT_EQ(*ReadModelFile(dir_, "link.txt", "label_filename"), "secret\n");
}

TEST_F(ModelFileTest, NamesThatLeaveTheDirectoryAndBigFilesAreRefused) {
  auto message = [&](std::string_view name, uintmax_t max = kMaxModelFileBytes) {
    return std::string(ReadModelFile(dir_, name, "label_filename", max).status().message());
  };
  EXPECT_THAT(message("../outside.txt"), HasSubstr("must be a file name in"));
  EXPECT_THAT(message("/etc/passwd"), HasSubstr("without a path"));
  EXPECT_THAT(message(".."), HasSubstr("without a path"));
  EXPECT_THAT(message(std::string("labels.txt\0x", 12)), HasSubstr("without a path"));
  EXPECT_THAT(message("sub"), HasSubstr("not a regular file"));
  EXPECT_THAT(message("missing.txt"), HasSubstr("not a regular file"));
  EXPECT_THAT(message("labels.txt", 4), HasSubstr("larger than 4 bytes"));
}

}  // namespace
}  // namespace brigade::repository
