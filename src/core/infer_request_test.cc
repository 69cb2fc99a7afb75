#include "core/infer_request.h"

#include <memory>

#include "gtest/gtest.h"

namespace brigade {
namespace {

TEST(InferRequestTest, CompleteCallsTheCallbackOnce) {
  int calls = 0;
  auto request = std::make_unique<InferRequest>();
  request->on_complete = [&](absl::StatusOr<InferResponse> result) {
    ++calls;
    EXPECT_TRUE(result.ok());
  };
  request->Complete(InferResponse{});
  request->Complete(absl::InternalError("second"));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(request->completed());
}

TEST(InferRequestTest, FindInputByName) {
  InferRequest request;
  request.inputs.push_back({"x", Tensor(), {}});
  EXPECT_NE(request.FindInput("x"), nullptr);
  EXPECT_EQ(request.FindInput("y"), nullptr);
}

TEST(InferRequestTest, CancelFlagIsSharedWithTheTransport) {
  InferRequest request;
  EXPECT_FALSE(request.cancelled());
  request.cancel = std::make_shared<CancelFlag>();
  auto transport_side = request.cancel;
  transport_side->Cancel();
  EXPECT_TRUE(request.cancelled());
}

}  // namespace
}  // namespace brigade
