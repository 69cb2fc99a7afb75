#ifndef BRIGADE_TESTING_PROMTOOL_H_
#define BRIGADE_TESTING_PROMTOOL_H_

// Lints a Prometheus exposition text with `promtool check metrics`, Prometheus' own parser and
// linter (Debian package `prometheus`), for the tests of every component that renders /metrics
// families. Test-only.
//
//   if (!testing::PromtoolInstalled()) GTEST_SKIP() << "promtool not installed";
//   absl::StatusOr<testing::PromtoolResult> result = testing::CheckMetrics(registry.Text());
//   ASSERT_TRUE(result.ok()) << result.status();
//   EXPECT_EQ(result->exit_code, 0) << result->findings;
//
// promtool is the one found when the build was configured (find_program in this folder's
// CMakeLists.txt). The text goes through a fresh temporary file (removed before returning) and
// promtool runs without a shell. Thread-safe: calls share nothing.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace brigade::testing {

struct PromtoolResult {
  // promtool's exit status: 0 clean, 3 lint findings only, 1 the text does not parse.
  int exit_code = -1;
  // What promtool printed on stdout and stderr: one line per finding, empty when clean.
  std::string findings;
};

// True when the build found promtool; tests that need it skip otherwise.
bool PromtoolInstalled();

// Runs `promtool check metrics` on `exposition`. Errors: FAILED_PRECONDITION when promtool is not
// installed; INTERNAL when the temporary file cannot be written, promtool cannot be started, or
// it does not exit normally (killed by a signal).
absl::StatusOr<PromtoolResult> CheckMetrics(std::string_view exposition);

}  // namespace brigade::testing

#endif  // BRIGADE_TESTING_PROMTOOL_H_
