#include "frontend/status_map.h"

#include "grpcpp/support/status_code_enum.h"
#include "gtest/gtest.h"

namespace brigade::frontend {
namespace {

TEST(StatusMapTest, FollowsTritonsHttpTable) {
  EXPECT_EQ(MapStatus(absl::StatusCode::kInternal).http_status, 500);
  EXPECT_EQ(MapStatus(absl::StatusCode::kNotFound).http_status, 404);
  EXPECT_EQ(MapStatus(absl::StatusCode::kUnavailable).http_status, 503);
  EXPECT_EQ(MapStatus(absl::StatusCode::kUnimplemented).http_status, 501);
  EXPECT_EQ(MapStatus(absl::StatusCode::kInvalidArgument).http_status, 400);
  EXPECT_EQ(MapStatus(absl::StatusCode::kAlreadyExists).http_status, 400);
  EXPECT_EQ(MapStatus(absl::StatusCode::kCancelled).http_status, 400);
  EXPECT_EQ(MapStatus(absl::StatusCode::kUnknown).http_status, 400);
}

TEST(StatusMapTest, OversizedPayloadIs413) {
  EXPECT_EQ(MapStatus(absl::StatusCode::kResourceExhausted).http_status, 413);
  EXPECT_EQ(MapStatus(absl::StatusCode::kResourceExhausted).grpc_code,
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(StatusMapTest, GrpcCodesMatchGrpcsEnum) {
  EXPECT_EQ(MapStatus(absl::StatusCode::kInvalidArgument).grpc_code,
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(MapStatus(absl::StatusCode::kNotFound).grpc_code, grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(MapStatus(absl::StatusCode::kUnavailable).grpc_code, grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(MapStatus(absl::StatusCode::kUnimplemented).grpc_code, grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(MapStatus(absl::StatusCode::kDeadlineExceeded).grpc_code,
            grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(MapStatus(absl::StatusCode::kDataLoss).grpc_code, grpc::StatusCode::INTERNAL);
}

}  // namespace
}  // namespace brigade::frontend
