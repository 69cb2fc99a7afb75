#include "tools/doctor/host_files.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace brigade::doctor {
namespace {

const std::string kHostFixtures = BRIGADE_DOCTOR_TESTDATA;

TEST(CpuListTest, ParsesRangesAndSinglesAndFoldsThemBack) {
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(FormatCpuList(*cpus), "0-3,8,10-11");
  EXPECT_TRUE(ParseCpuList("")->empty());
}

TEST(CpuListTest, RefusesBackwardsRangesJunkAndIdsBeyondTheKernelsLimit) {
  for (const char* bad : {"3-1", "a", "1,,2", "-1", "0-99999", "8192"}) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(bad);
    EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(HostFilesTest, ReadsUnderTheRootAndNamesTheHostPathWhenMissing) {
  const HostFiles host(kHostFixtures + "/tuned/");
  EXPECT_FALSE(host.is_live_host());
  EXPECT_EQ(*host.ReadLine("/sys/devices/system/cpu/online"), "0-7");
  absl::StatusOr<std::string> missing = host.Read("/sys/nothing/here");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/sys/nothing/here"), std::string::npos);
  EXPECT_EQ(missing.status().message().find(kHostFixtures), std::string::npos)
      << "the message names the fixture's folder: " << missing.status();
  EXPECT_TRUE(HostFiles("/").is_live_host());
}

TEST(HostFilesTest, FollowsAbsoluteLinksInsideTheRoot) {
  const HostFiles host(kHostFixtures + "/smt_powersave");
  absl::StatusOr<std::vector<std::string>> chain =
      host.Resolve("/usr/lib/x86_64-linux-gnu/libblas.so.3");
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_EQ(*chain, (std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libblas.so.3",
                                              "/etc/alternatives/libblas.so.3-x86_64-linux-gnu",
                                              "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"}));
  EXPECT_EQ(host.Resolve("/usr/lib/none.so").status().code(), absl::StatusCode::kNotFound);
}

TEST(HostFilesTest, ListsAFolderSortedAndAMissingOneEmpty) {
  const HostFiles host(kHostFixtures + "/tuned");
  EXPECT_EQ(host.List("/sys/devices/system/node"), (std::vector<std::string>{"node0", "node1"}));
  EXPECT_TRUE(host.List("/sys/nothing").empty());
}

}  // namespace
}  // namespace brigade::doctor
