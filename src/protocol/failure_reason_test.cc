#include "protocol/failure_reason.h"

#include "gtest/gtest.h"

namespace brigade::protocol {
namespace {

TEST(FailureReasonTest, SchedulerRefusalsAndTimeoutsAreRejected) {
  EXPECT_EQ(FailureReasonOf(absl::UnavailableError("queue is full")), FailureReason::kRejected);
  EXPECT_EQ(FailureReasonOf(absl::ResourceExhaustedError("level full")), FailureReason::kRejected);
  EXPECT_EQ(FailureReasonOf(absl::DeadlineExceededError("timed out in the queue")),
            FailureReason::kRejected);
}

TEST(FailureReasonTest, CancellationIsCanceledAndTheRestIsOther) {
  EXPECT_EQ(FailureReasonOf(absl::CancelledError("client left")), FailureReason::kCanceled);
  EXPECT_EQ(FailureReasonOf(absl::InvalidArgumentError("bad input")), FailureReason::kOther);
  EXPECT_EQ(FailureReasonOf(absl::InternalError("slicing")), FailureReason::kOther);
  EXPECT_EQ(FailureReasonOf(absl::NotFoundError("no output")), FailureReason::kOther);
}

TEST(FailureReasonTest, AMarkedReasonWinsOverTheCode) {
  // A backend may fail with any code, including ones the scheduler uses.
  const absl::Status backend =
      WithFailureReason(absl::ResourceExhaustedError("out of memory"), FailureReason::kBackend);
  EXPECT_EQ(FailureReasonOf(backend), FailureReason::kBackend);
  EXPECT_EQ(backend.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(backend.message(), "out of memory");
  EXPECT_EQ(FailureReasonOf(
                WithFailureReason(absl::InvalidArgumentError("shape"), FailureReason::kBackend)),
            FailureReason::kBackend);
  // The mark survives copies, as the status travels through callbacks.
  const absl::Status copy = backend;
  EXPECT_EQ(FailureReasonOf(copy), FailureReason::kBackend);
}

TEST(FailureReasonTest, OkIsNeverMarkedAndNamesAreTritons) {
  EXPECT_TRUE(WithFailureReason(absl::OkStatus(), FailureReason::kBackend).ok());
  EXPECT_EQ(FailureReasonName(FailureReason::kRejected), "REJECTED");
  EXPECT_EQ(FailureReasonName(FailureReason::kCanceled), "CANCELED");
  EXPECT_EQ(FailureReasonName(FailureReason::kBackend), "BACKEND");
  EXPECT_EQ(FailureReasonName(FailureReason::kOther), "OTHER");
}

}  // namespace
}  // namespace brigade::protocol
