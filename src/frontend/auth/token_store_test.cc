#include "frontend/auth/token_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::frontend::auth {
namespace {

using ::testing::HasSubstr;

constexpr char kFirst[] = "infer first-token-0123456789 app\n";
constexpr char kSecond[] = "infer second-token-012345678 app\n";

class TokenStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "brigade-tokens-XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/tokens";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to the token file with `mode`, and a modification time `mtime_s` seconds
  // after the epoch so consecutive writes differ whatever the file system's time resolution.
  void Write(const std::string& text, mode_t mode, int64_t mtime_s) {
    {
      std::ofstream out(path_, std::ios::trunc);
      out << text;
    }
    ASSERT_EQ(chmod(path_.c_str(), mode), 0);
    struct timespec times[2] = {{mtime_s, 0}, {mtime_s, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, path_.c_str(), times, 0), 0);
  }

  std::string dir_;
  std::string path_;
};

TEST_F(TokenStoreTest, LoadsAnOwnerOnlyFile) {
  Write(kFirst, 0600, 1000);
  absl::StatusOr<std::unique_ptr<TokenStore>> store = TokenStore::Create(path_);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_NE((*store)->Current()->Find("first-token-0123456789"), nullptr);
}

TEST_F(TokenStoreTest, RefusesAFileItsGroupOrOthersMayReadOrWrite) {
  for (mode_t mode : {0640, 0604, 0620, 0602, 0644, 0660}) {
    Write(kFirst, mode, 1000);
    absl::StatusOr<std::unique_ptr<TokenStore>> store = TokenStore::Create(path_);
    ASSERT_FALSE(store.ok()) << std::oct << mode;
    EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(store.status().message(), HasSubstr("chmod 600"));
  }
  Write(kFirst, 0400, 1000);
  EXPECT_TRUE(TokenStore::Create(path_).ok());
}

TEST_F(TokenStoreTest, RefusesADirectoryAndAMissingFile) {
  EXPECT_EQ(TokenStore::Create(path_).status().code(), absl::StatusCode::kNotFound);
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  EXPECT_THAT(TokenStore::Create(dir_).status().message(), HasSubstr("not a regular file"));
}

TEST_F(TokenStoreTest, ReloadIfChangedReadsOnlyAChangedFile) {
  Write(kFirst, 0600, 1000);
  absl::StatusOr<std::unique_ptr<TokenStore>> store = TokenStore::Create(path_);
  ASSERT_TRUE(store.ok());
  absl::StatusOr<bool> unchanged = (*store)->ReloadIfChanged();
  ASSERT_TRUE(unchanged.ok());
  EXPECT_FALSE(*unchanged);
  Write(kSecond, 0600, 2000);
  absl::StatusOr<bool> changed = (*store)->ReloadIfChanged();
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ((*store)->Current()->Find("first-token-0123456789"), nullptr);
  EXPECT_NE((*store)->Current()->Find("second-token-012345678"), nullptr);
}

TEST_F(TokenStoreTest, ABadNewFileKeepsTheTokensInForce) {
  Write(kFirst, 0600, 1000);
  absl::StatusOr<std::unique_ptr<TokenStore>> store = TokenStore::Create(path_);
  ASSERT_TRUE(store.ok());
  std::shared_ptr<const TokenSet> held = (*store)->Current();

  Write("infer short app\n", 0600, 2000);
  absl::StatusOr<bool> bad_text = (*store)->ReloadIfChanged();
  EXPECT_FALSE(bad_text.ok());
  EXPECT_THAT(bad_text.status().message(), HasSubstr("line 1"));
  EXPECT_NE((*store)->Current()->Find("first-token-0123456789"), nullptr);
  // Unchanged since: not read (nor reported) again.
  EXPECT_TRUE((*store)->ReloadIfChanged().ok());

  Write(kSecond, 0644, 3000);
  EXPECT_EQ((*store)->Reload().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE((*store)->Current()->Find("first-token-0123456789"), nullptr);

  ASSERT_EQ(chmod(path_.c_str(), 0600), 0);
  EXPECT_TRUE((*store)->Reload().ok());
  EXPECT_NE((*store)->Current()->Find("second-token-012345678"), nullptr);
  // A set handed out earlier stays valid after the reload.
  EXPECT_NE(held->Find("first-token-0123456789"), nullptr);
}

TEST_F(TokenStoreTest, AFileThatDisappearsKeepsTheTokensInForce) {
  Write(kFirst, 0600, 1000);
  absl::StatusOr<std::unique_ptr<TokenStore>> store = TokenStore::Create(path_);
  ASSERT_TRUE(store.ok());
  std::filesystem::remove(path_);
  EXPECT_FALSE((*store)->ReloadIfChanged().ok());
  EXPECT_NE((*store)->Current()->Find("first-token-0123456789"), nullptr);
}

TEST_F(TokenStoreTest, ReadPrivateFileStopsAtItsLimit) {
  Write(std::string(100, '#'), 0600, 1000);
  absl::StatusOr<PrivateFile> file = ReadPrivateFile(path_, 99);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("the limit is 99"));
  file = ReadPrivateFile(path_, 100);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->text.size(), 100u);
}

}  // namespace
}  // namespace brigade::frontend::auth
