#include "telemetry/dashboard_page.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DashboardPageTest, IsOneCompleteHtmlDocument) {
  const std::string page(DashboardPage());
  EXPECT_THAT(page, testing::StartsWith("<!doctype html>"));
  EXPECT_THAT(page, HasSubstr("</html>"));
  EXPECT_THAT(page, HasSubstr("<title>Brigade dashboard</title>"));
}

TEST(DashboardPageTest, InlinesItsStylesheetAndScriptsAndLoadsNothingElse) {
  const std::string page(DashboardPage());
  EXPECT_THAT(page, HasSubstr("<style>"));
  EXPECT_THAT(page, HasSubstr("const BrigadeMetrics ="));  // prometheus.js
  EXPECT_THAT(page, HasSubstr("function renderCard("));    // dashboard.js
  EXPECT_THAT(page, Not(HasSubstr("<script src=")));
  EXPECT_THAT(page, Not(HasSubstr("<link rel=\"stylesheet\"")));
  // No remote resources (the SVG namespace URI is an identifier, not a load).
  EXPECT_THAT(page, Not(HasSubstr("src=\"http")));
  EXPECT_THAT(page, Not(HasSubstr("href=\"http")));
  EXPECT_THAT(page, Not(HasSubstr("url(")));
  EXPECT_THAT(page, Not(HasSubstr("@import")));
}

TEST(DashboardPageTest, PollsTheSameOriginMetricsEndpoint) {
  EXPECT_THAT(std::string(DashboardPage()), HasSubstr("'/metrics'"));
}

}  // namespace
}  // namespace brigade::telemetry
