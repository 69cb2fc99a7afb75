#include "tools/doctor/memory_limit.h"

#include <string>

#include "gtest/gtest.h"

namespace brigade::doctor {
namespace {

HostFiles Fixture(const std::string& name) { return HostFiles(BRIGADE_DOCTOR_TESTDATA "/" + name); }

TEST(MemoryLimitTest, AContainersCgroupLimitIsTighterThanItsHostsMemory) {
  const MemoryLimit limit = ReadMemoryLimit(Fixture("container"));
  EXPECT_EQ(limit.physical_bytes, uint64_t{65799548} * 1024);
  EXPECT_EQ(limit.cgroup_bytes, uint64_t{2} << 30);
  EXPECT_EQ(limit.usable_bytes(), uint64_t{2} << 30);
}

TEST(MemoryLimitTest, TheTightestAncestorOfAV2CgroupWins) {
  // brigade.service says "max"; its parent system.slice holds 8 GiB.
  const MemoryLimit limit = ReadMemoryLimit(Fixture("tuned"));
  EXPECT_EQ(limit.cgroup_bytes, uint64_t{8} << 30);
  EXPECT_EQ(limit.usable_bytes(), uint64_t{8} << 30);
}

TEST(MemoryLimitTest, AV1NoLimitValueAndAMissingMeminfoLeaveNothingKnown) {
  const MemoryLimit limit = ReadMemoryLimit(Fixture("smt_powersave"));
  EXPECT_FALSE(limit.cgroup_bytes.has_value());
  EXPECT_FALSE(limit.physical_bytes.has_value());
  EXPECT_FALSE(limit.usable_bytes().has_value());
  EXPECT_FALSE(limit.evidence.empty());
}

}  // namespace
}  // namespace brigade::doctor
