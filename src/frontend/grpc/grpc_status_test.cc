#include "frontend/grpc/grpc_status.h"

#include <chrono>

#include "absl/strings/cord.h"
#include "frontend/status_map.h"
#include "grpcpp/test/server_context_test_spouse.h"
#include "gtest/gtest.h"
#include "protocol/error_payload.h"

namespace brigade::frontend {
namespace {

absl::Status UnavailableWithRetryAfter(int64_t seconds) {
  return protocol::WithRetryAfter(absl::UnavailableError("queue full"), seconds);
}

TEST(GrpcStatusTest, CodesComeFromTheMappingTableAndMessagesAreKept) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  const grpc::Status invalid = ToGrpcStatus(absl::InvalidArgumentError("input 'x': bad"));
  EXPECT_EQ(invalid.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(invalid.error_message(), "input 'x': bad");
  EXPECT_EQ(ToGrpcStatus(absl::NotFoundError("m")).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ToGrpcStatus(absl::UnavailableError("u")).error_code(), grpc::StatusCode::UNAVAILABLE);
  // The table folds codes gRPC clients should not branch on into INTERNAL.
  EXPECT_EQ(ToGrpcStatus(absl::DataLossError("d")).error_code(),
            static_cast<grpc::StatusCode>(GrpcCodeFor(absl::DataLossError("d"))));
}

TEST(GrpcStatusTest, FinishStatusAddsRetryAfterTrailingMetadata) {
  grpc::ServerContext context;
  grpc::testing::ServerContextTestSpouse spouse(&context);
  const grpc::Status status = FinishStatus(UnavailableWithRetryAfter(2), &context);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  const auto trailing = spouse.GetTrailingMetadata();
  ASSERT_EQ(trailing.count(kRetryAfterMetadata), 1u);
  EXPECT_EQ(trailing.find(kRetryAfterMetadata)->second, "2");

  grpc::ServerContext plain;
  grpc::testing::ServerContextTestSpouse plain_spouse(&plain);
  FinishStatus(absl::UnavailableError("no hint"), &plain);
  EXPECT_TRUE(plain_spouse.GetTrailingMetadata().empty());
}

TEST(GrpcStatusTest, GrpcDeadlineBecomesMonotonic) {
  const auto wall_now = std::chrono::system_clock::now();
  constexpr int64_t kMonotonicNowNs = 7'000'000'000;
  EXPECT_TRUE(
      FromGrpcDeadline(std::chrono::system_clock::time_point::max(), wall_now, kMonotonicNowNs)
          .infinite());
  EXPECT_EQ(
      FromGrpcDeadline(wall_now + std::chrono::milliseconds(5), wall_now, kMonotonicNowNs).ns(),
      kMonotonicNowNs + 5'000'000);
  // Already past: expired now, never in the past of the monotonic clock's epoch.
  EXPECT_EQ(FromGrpcDeadline(wall_now - std::chrono::seconds(1), wall_now, kMonotonicNowNs).ns(),
            kMonotonicNowNs);
}

}  // namespace
}  // namespace brigade::frontend
