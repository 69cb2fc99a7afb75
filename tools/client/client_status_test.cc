#include "tools/client/client_status.h"

#include "gtest/gtest.h"

namespace brigade::client {
namespace {

TEST(ClientStatusTest, HttpErrorKeepsTheServersStatusAndMessage) {
  const absl::Status status = HttpError(503, "model 'm' is not ready");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "model 'm' is not ready");
  EXPECT_EQ(HttpStatusOf(status), 503);
  EXPECT_EQ(GrpcCodeOf(status), std::nullopt);
}

TEST(ClientStatusTest, HttpStatusesMapToTheInverseOfTheServersTable) {
  EXPECT_EQ(CodeForHttpStatus(400), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeForHttpStatus(404), absl::StatusCode::kNotFound);
  EXPECT_EQ(CodeForHttpStatus(413), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CodeForHttpStatus(500), absl::StatusCode::kInternal);
  EXPECT_EQ(CodeForHttpStatus(501), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(CodeForHttpStatus(503), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CodeForHttpStatus(504), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(CodeForHttpStatus(418), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeForHttpStatus(599), absl::StatusCode::kInternal);
}

TEST(ClientStatusTest, GrpcErrorSharesAbslNumbering) {
  const absl::Status status = GrpcError(5, "unknown model 'x'");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(GrpcCodeOf(status), 5);
  EXPECT_EQ(HttpStatusOf(status), std::nullopt);
  EXPECT_EQ(GrpcError(99, "odd").code(), absl::StatusCode::kUnknown);
}

TEST(ClientStatusTest, ClientSideErrorsCarryNoServerStatus) {
  EXPECT_EQ(HttpStatusOf(absl::UnavailableError("connection refused")), std::nullopt);
}

}  // namespace
}  // namespace brigade::client
