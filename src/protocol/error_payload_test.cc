#include "protocol/error_payload.h"

#include "gtest/gtest.h"

namespace brigade::protocol {
namespace {

TEST(ErrorPayloadTest, AnUnavailableStatusCarriesItsRetryAfterInWholeSeconds) {
  const absl::Status status = WithRetryAfter(absl::UnavailableError("queue full"), 3);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "queue full");
  EXPECT_EQ(RetryAfterSeconds(status), "3");
}

TEST(ErrorPayloadTest, ARetryAfterIsAtLeastOneSecond) {
  EXPECT_EQ(RetryAfterSeconds(WithRetryAfter(absl::UnavailableError("busy"), 0)), "1");
  EXPECT_EQ(RetryAfterSeconds(WithRetryAfter(absl::UnavailableError("busy"), -5)), "1");
}

TEST(ErrorPayloadTest, OnlyUnavailableStatusesReportARetryAfter) {
  EXPECT_EQ(RetryAfterSeconds(WithRetryAfter(absl::InvalidArgumentError("bad"), 2)), std::nullopt);
  EXPECT_EQ(RetryAfterSeconds(absl::UnavailableError("no payload")), std::nullopt);
  EXPECT_EQ(RetryAfterSeconds(absl::OkStatus()), std::nullopt);
}

}  // namespace
}  // namespace brigade::protocol
