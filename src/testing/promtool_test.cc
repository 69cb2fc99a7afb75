#include "testing/promtool.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::testing {
namespace {

using ::testing::HasSubstr;

class PromtoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PromtoolInstalled()) GTEST_SKIP() << "promtool not installed";
  }
};

TEST_F(PromtoolTest, CleanTextExitsZeroWithoutFindings) {
  const absl::StatusOr<PromtoolResult> result = CheckMetrics(
      "# HELP requests_total Requests.\n# TYPE requests_total counter\n"
      "requests_total{model=\"a\"} 3\n");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0) << result->findings;
  EXPECT_EQ(result->findings, "");
}

TEST_F(PromtoolTest, LintFindingsExitThreeAndNameTheFamily) {
  const absl::StatusOr<PromtoolResult> result =
      CheckMetrics("# HELP requests Requests.\n# TYPE requests counter\nrequests 3\n");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 3) << result->findings;
  EXPECT_THAT(result->findings, HasSubstr("requests counter metrics should have \"_total\""));
}

TEST_F(PromtoolTest, UnparsableTextExitsOne) {
  const absl::StatusOr<PromtoolResult> result = CheckMetrics("requests{ 3\n");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 1) << result->findings;
  EXPECT_THAT(result->findings, HasSubstr("parsing error"));
}

}  // namespace
}  // namespace brigade::testing
