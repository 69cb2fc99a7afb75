#include "repository/version_policy.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace brigade::repository {
namespace {

TEST(VersionPolicyTest, DefaultServesTheHighestVersion) {
  config::ModelVersionPolicy policy;
  EXPECT_EQ(SelectVersions(policy, {3, 1, 2}).versions, (std::vector<int64_t>{3}));
}

TEST(VersionPolicyTest, LatestKeepsNVersions) {
  config::ModelVersionPolicy policy;
  policy.mutable_latest()->set_num_versions(2);
  EXPECT_EQ(SelectVersions(policy, {1, 5, 3}).versions, (std::vector<int64_t>{3, 5}));
  policy.mutable_latest()->set_num_versions(9);
  EXPECT_EQ(SelectVersions(policy, {1, 5}).versions, (std::vector<int64_t>{1, 5}));
}

TEST(VersionPolicyTest, AllServesEverything) {
  config::ModelVersionPolicy policy;
  policy.mutable_all();
  EXPECT_EQ(SelectVersions(policy, {2, 1}).versions, (std::vector<int64_t>{1, 2}));
}

TEST(VersionPolicyTest, SpecificReportsMissingVersions) {
  config::ModelVersionPolicy policy;
  policy.mutable_specific()->add_versions(1);
  policy.mutable_specific()->add_versions(4);
  const VersionSelection selection = SelectVersions(policy, {1, 2, 3});
  EXPECT_EQ(selection.versions, (std::vector<int64_t>{1}));
  EXPECT_EQ(selection.missing, (std::vector<int64_t>{4}));
}

TEST(VersionPolicyTest, OnlyNumericDirectoriesAreVersions) {
  const auto root = std::filesystem::temp_directory_path() / "brigade_version_policy_test";
  std::filesystem::remove_all(root);
  for (const char* dir : {"1", "10", "2", "abc", "-3", "3x"}) {
    std::filesystem::create_directories(root / dir);
  }
  std::ofstream(root / "7") << "a file, not a directory";
  EXPECT_EQ(ListVersionDirs(root.string()), (std::vector<int64_t>{1, 2, 10}));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace brigade::repository
