#include "core/plain_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade {
namespace {

namespace fs = std::filesystem;

using ::testing::HasSubstr;

class ResolveInsideDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("brigade-plain-file-test-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    dir_ = base_ / "model";
    fs::create_directories(dir_ / "sub");
    std::ofstream(dir_ / "sub" / "w.bin") << "weights";
    std::ofstream(base_ / "secret.bin") << "secret";
    fs::create_symlink(base_ / "secret.bin", dir_ / "out.bin");
    fs::create_symlink(dir_ / "sub" / "w.bin", dir_ / "in.bin");
    fs::create_symlink(base_, dir_ / "up");
  }
  void TearDown() override { fs::remove_all(base_); }

  absl::StatusCode Code(std::string_view relative) {
    return ResolveInsideDir(dir_, relative).status().code();
  }

  fs::path base_;
  fs::path dir_;
};

TEST_F(ResolveInsideDirTest, PathsThatStayInsideResolveToTheirCanonicalForm) {
  const fs::path root = fs::canonical(dir_);
  EXPECT_EQ(*ResolveInsideDir(dir_, "sub/w.bin"), root / "sub" / "w.bin");
  EXPECT_EQ(*ResolveInsideDir(dir_, "sub/../sub/w.bin"), root / "sub" / "w.bin");
  EXPECT_EQ(*ResolveInsideDir(dir_, "in.bin"), root / "sub" / "w.bin");  // a link inside
  EXPECT_EQ(*ResolveInsideDir(dir_, "missing.bin"), root / "missing.bin");
}

TEST_F(ResolveInsideDirTest, DotDotAndLinksOutOfTheDirectoryAreRefused) {
  EXPECT_EQ(Code("../secret.bin"), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Code("sub/../../secret.bin"), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Code("out.bin"), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Code("up/secret.bin"), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(ResolveInsideDir(dir_, "out.bin").status().message(), HasSubstr("'out.bin' escapes"));
}

TEST_F(ResolveInsideDirTest, AbsoluteEmptyAndSelfNamingPathsAreRefused) {
  EXPECT_EQ(Code((base_ / "secret.bin").string()), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Code(""), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Code("."), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Code("sub/.."), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Code(std::string("w.bin\0x", 7)), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveInsideDir(base_ / "absent", "x").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace brigade
