// The cascade's row-level escalation: only the uncertain rows of a batch go to the second
// variant, and its answers are put back in place.

#include <memory>
#include <string>
#include <vector>

#include "core/strings.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "route/cascade.h"

namespace brigade::route {
namespace {

// Records every variant request; the test answers them.
class RowRunner final : public StepRunner {
 public:
  void RunStep(std::unique_ptr<InferRequest> step) override { sent.push_back(std::move(step)); }

  std::unique_ptr<InferRequest> Take() {
    std::unique_ptr<InferRequest> step = std::move(sent.front());
    sent.erase(sent.begin());
    return step;
  }

  std::vector<std::unique_ptr<InferRequest>> sent;
};

// The per-row values of an FP32 [rows, width] tensor.
std::vector<float> Values(const Tensor& tensor) {
  std::span<const float> values = tensor.values<float>();
  return {values.begin(), values.end()};
}

class CascadeRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config::ModelRouting config;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        R"pb(variant { name: "small" model_name: "mlp" }
             variant { name: "large" model_name: "cnn" }
             cascade { first: "small" second: "large" output: "logits" threshold: 0.8 })pb",
        &config));
    auto policy = RoutingPolicy::Create("cascade", config);
    ASSERT_TRUE(policy.ok()) << policy.status();
    policy_ = *std::move(policy);
    cascade_ = Cascade::Create(policy_, 2, /*batching=*/true, &clock_);
  }

  // A batch of `rows` images: row r is {r, r + 0.5}.
  std::unique_ptr<InferRequest> Request(int64_t rows) {
    auto request = std::make_unique<InferRequest>();
    request->id = "q";
    request->cancel = std::make_shared<CancelFlag>();
    std::vector<float> image;
    for (int64_t r = 0; r < rows; ++r) {
      image.push_back(static_cast<float>(r));
      image.push_back(static_cast<float>(r) + 0.5f);
    }
    request->inputs.push_back(InferInput{
        "image", *Tensor::FromValues<float>({rows, 2}, std::span<const float>(image)), {}});
    request->on_complete = [this](absl::StatusOr<InferResponse> result) {
      ++answers_;
      result_ = std::move(result);
    };
    return request;
  }

  // Answers `step` with "logits" ([rows, 2], row r's top probability `top[r]`) and "label"
  // ([rows, 1]: `base` + the row's first image value), so each answer row shows its variant
  // and the input row it came from.
  static void Answer(std::unique_ptr<InferRequest> step, const std::vector<float>& top,
                     float base) {
    const Tensor& image = step->inputs[0].tensor;
    const auto rows = static_cast<int64_t>(top.size());
    EXPECT_EQ(image.shape()[0], rows);
    std::vector<float> logits;
    std::vector<float> label;
    for (int64_t r = 0; r < rows; ++r) {
      logits.push_back(top[r]);
      logits.push_back(1.0f - top[r]);
      label.push_back(base + image.values<float>()[2 * r]);
    }
    InferResponse response;
    response.model_name = step->model_name;
    response.model_version = "1";
    response.outputs.push_back(InferOutput{
        "logits", *Tensor::FromValues<float>({rows, 2}, std::span<const float>(logits)), {}});
    response.outputs.push_back(InferOutput{
        "label", *Tensor::FromValues<float>({rows, 1}, std::span<const float>(label)), {}});
    step->Complete(std::move(response));
  }

  std::string Param(std::string_view key) const {
    std::optional<std::string_view> value = result_->parameters.GetString(key);
    return value.has_value() ? std::string(*value) : "";
  }
  int64_t EscalatedRows() const {
    return result_->parameters.GetInt("cascade_escalated_rows").value_or(-1);
  }
  uint64_t Counted(int variant, RouteReason reason) const {
    return policy_->Counts()[variant][static_cast<int>(reason)];
  }

  FakeClock clock_;
  RowRunner runner_;
  std::shared_ptr<const RoutingPolicy> policy_;
  std::shared_ptr<Cascade> cascade_;
  int answers_ = 0;
  absl::StatusOr<InferResponse> result_ = absl::UnknownError("not answered");
};

TEST_F(CascadeRowsTest, OnlyTheUncertainRowsGoToTheSecondVariantAndComeBackInPlace) {
  cascade_->Run(Request(4), &runner_);
  ASSERT_EQ(runner_.sent.size(), 1u);
  // Rows 1 and 3 score 0.625 < 0.8 (binary fractions, so 1 - p is exact).
  Answer(runner_.Take(), {0.875f, 0.625f, 0.9375f, 0.625f}, 10);
  ASSERT_EQ(answers_, 0);
  ASSERT_EQ(runner_.sent.size(), 1u);
  const InferRequest& second = *runner_.sent[0];
  EXPECT_EQ(second.model_name, "cnn");
  EXPECT_EQ(second.id, "q");
  ASSERT_EQ(second.inputs.size(), 1u);
  EXPECT_EQ(second.inputs[0].name, "image");
  EXPECT_EQ(second.inputs[0].tensor.shape(), (Shape{2, 2}));
  EXPECT_EQ(Values(second.inputs[0].tensor), (std::vector<float>{1, 1.5f, 3, 3.5f}));
  Answer(runner_.Take(), {0.75f, 0.25f}, 100);
  ASSERT_EQ(answers_, 1);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(result_->model_name, "cascade");
  EXPECT_EQ(result_->model_version, "2");
  ASSERT_EQ(result_->outputs.size(), 2u);
  EXPECT_EQ(result_->outputs[0].name, "logits");
  EXPECT_EQ(Values(result_->outputs[0].tensor),
            (std::vector<float>{0.875f, 0.125f, 0.75f, 0.25f, 0.9375f, 0.0625f, 0.25f, 0.75f}));
  EXPECT_EQ(result_->outputs[1].name, "label");
  EXPECT_EQ(result_->outputs[1].tensor.shape(), (Shape{4, 1}));
  EXPECT_EQ(Values(result_->outputs[1].tensor), (std::vector<float>{10, 101, 12, 103}));
  EXPECT_EQ(Param("cascade"), "partial");
  EXPECT_EQ(Param("routed_to"), "mlp:1,cnn:1");
  EXPECT_EQ(EscalatedRows(), 2);
  EXPECT_EQ(Counted(1, RouteReason::kCascadePartial), 1u);
  EXPECT_EQ(Counted(0, RouteReason::kCascadeAccepted), 0u);
  EXPECT_EQ(Counted(1, RouteReason::kCascadeEscalated), 0u);
}

TEST_F(CascadeRowsTest, ConsecutiveUncertainRowsAreSentAsAViewWithoutACopy) {
  std::unique_ptr<InferRequest> request = Request(4);
  const std::byte* image = request->inputs[0].tensor.data();
  cascade_->Run(std::move(request), &runner_);
  Answer(runner_.Take(), {0.9f, 0.5f, 0.5f, 0.9f}, 10);
  ASSERT_EQ(runner_.sent.size(), 1u);
  const Tensor& sent = runner_.sent[0]->inputs[0].tensor;
  EXPECT_EQ(sent.data(), image + 2 * sizeof(float));  // rows 1 and 2 of the request's bytes
  EXPECT_EQ(Values(sent), (std::vector<float>{1, 1.5f, 2, 2.5f}));
  Answer(runner_.Take(), {0.6f, 0.6f}, 100);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(Values(result_->outputs[1].tensor), (std::vector<float>{10, 101, 102, 13}));
}

TEST_F(CascadeRowsTest, ABatchOfCertainRowsMakesNoSecondCallAndNoCopy) {
  cascade_->Run(Request(4), &runner_);
  std::unique_ptr<InferRequest> first = runner_.Take();
  // Keep the answer's bytes to see that the router answers with them as they are.
  InferResponse answer;
  first->on_complete =
      [&, done = std::move(first->on_complete)](absl::StatusOr<InferResponse> result) mutable {
        answer = *result;
        done(std::move(result));
      };
  Answer(std::move(first), {0.9f, 0.8f, 0.95f, 0.99f}, 10);
  EXPECT_TRUE(runner_.sent.empty());
  ASSERT_EQ(answers_, 1);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(result_->outputs[0].tensor.data(), answer.outputs[0].tensor.data());
  EXPECT_EQ(Param("cascade"), "accepted");
  EXPECT_EQ(Param("routed_to"), "mlp:1");
  EXPECT_EQ(EscalatedRows(), 0);
  EXPECT_EQ(Counted(0, RouteReason::kCascadeAccepted), 1u);
}

TEST_F(CascadeRowsTest, ABatchOfUncertainRowsForwardsTheRequestItself) {
  std::unique_ptr<InferRequest> request = Request(4);
  const std::byte* image = request->inputs[0].tensor.data();
  cascade_->Run(std::move(request), &runner_);
  Answer(runner_.Take(), {0.5f, 0.6f, 0.7f, 0.79f}, 10);
  ASSERT_EQ(runner_.sent.size(), 1u);
  EXPECT_EQ(runner_.sent[0]->inputs[0].tensor.data(), image);  // no gather
  EXPECT_EQ(runner_.sent[0]->inputs[0].tensor.shape(), (Shape{4, 2}));
  Answer(runner_.Take(), {0.6f, 0.6f, 0.6f, 0.6f}, 100);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(Values(result_->outputs[1].tensor), (std::vector<float>{100, 101, 102, 103}));
  EXPECT_EQ(Param("cascade"), "escalated");
  EXPECT_EQ(Param("routed_to"), "cnn:1");
  EXPECT_EQ(EscalatedRows(), 4);
  EXPECT_EQ(Counted(1, RouteReason::kCascadeEscalated), 1u);
}

TEST_F(CascadeRowsTest, ASecondVariantAnsweringAnotherRowShapeFailsNamingTheOutputAndBoth) {
  cascade_->Run(Request(3), &runner_);
  Answer(runner_.Take(), {0.9f, 0.5f, 0.9f}, 10);
  std::unique_ptr<InferRequest> second = runner_.Take();
  InferResponse response;
  response.model_name = "cnn";
  response.model_version = "1";
  const std::vector<float> wide = {0.1f, 0.2f, 0.7f};
  response.outputs.push_back(
      InferOutput{"logits", *Tensor::FromValues<float>({1, 3}, std::span<const float>(wide)), {}});
  response.outputs.push_back(InferOutput{
      "label", *Tensor::FromValues<float>({1, 1}, std::span<const float>(wide).first(1)), {}});
  second->Complete(std::move(response));
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result_.status().message(),
            "router 'cascade' variant 'large': output 'logits': variant 'large' answered the 1 "
            "uncertain rows with FP32 [1,3] but variant 'small' answered 3 rows with FP32 [3,2]: "
            "a cascade that splits rows needs the same datatype and row shape from both");
  EXPECT_EQ(Counted(1, RouteReason::kCascadePartial), 0u);
}

TEST_F(CascadeRowsTest, ASecondVariantAnsweringAnotherDatatypeFailsNamingTheOutput) {
  cascade_->Run(Request(2), &runner_);
  Answer(runner_.Take(), {0.9f, 0.5f}, 10);
  std::unique_ptr<InferRequest> second = runner_.Take();
  InferResponse response;
  response.model_name = "cnn";
  response.model_version = "1";
  const std::vector<float> logits = {0.3f, 0.7f};
  response.outputs.push_back(InferOutput{
      "logits", *Tensor::FromValues<float>({1, 2}, std::span<const float>(logits)), {}});
  response.outputs.push_back(
      InferOutput{"label", *Tensor::FromValues<int32_t>({1, 1}, std::vector<int32_t>{7}), {}});
  second->Complete(std::move(response));
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(result_.status().message());
  EXPECT_NE(message.find("output 'label': variant 'large' answered the 1 uncertain rows with "
                         "INT32 [1,1] but variant 'small' answered 2 rows with FP32 [2,1]"),
            std::string::npos)
      << message;
}

TEST_F(CascadeRowsTest, ACancelledRequestSendsNoSecondCall) {
  std::unique_ptr<InferRequest> request = Request(4);
  std::shared_ptr<CancelFlag> cancel = request->cancel;
  cascade_->Run(std::move(request), &runner_);
  cancel->Cancel();
  Answer(runner_.Take(), {0.9f, 0.5f, 0.9f, 0.5f}, 10);
  EXPECT_TRUE(runner_.sent.empty());
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kCancelled);
}

TEST_F(CascadeRowsTest, ASecondVariantCancelledOrFailingOnTheUncertainRowsFailsTheRequest) {
  cascade_->Run(Request(4), &runner_);
  Answer(runner_.Take(), {0.9f, 0.5f, 0.9f, 0.5f}, 10);
  ASSERT_EQ(runner_.sent.size(), 1u);
  EXPECT_TRUE(runner_.sent[0]->cancel != nullptr);  // the client's flag reaches the variant
  runner_.Take()->Complete(absl::CancelledError("the request was cancelled"));
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(result_.status().message(),
            "router 'cascade' variant 'large': the request was cancelled");

  cascade_->Run(Request(4), &runner_);
  Answer(runner_.Take(), {0.9f, 0.5f, 0.9f, 0.9f}, 10);
  runner_.Take()->Complete(absl::UnavailableError("cnn is not loaded"));
  ASSERT_EQ(answers_, 2);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result_.status().message(), "router 'cascade' variant 'large': cnn is not loaded");
  EXPECT_EQ(Counted(1, RouteReason::kCascadePartial), 0u);
}

TEST_F(CascadeRowsTest, AnOutputWithoutABatchDimensionEscalatesTheWholeRequest) {
  std::unique_ptr<InferRequest> request = Request(2);
  const std::byte* image = request->inputs[0].tensor.data();
  cascade_->Run(std::move(request), &runner_);
  std::unique_ptr<InferRequest> first = runner_.Take();
  InferResponse response;
  response.model_name = "mlp";
  response.model_version = "1";
  const std::vector<float> logits = {0.9f, 0.1f, 0.5f, 0.5f};
  response.outputs.push_back(InferOutput{
      "logits", *Tensor::FromValues<float>({2, 2}, std::span<const float>(logits)), {}});
  response.outputs.push_back(InferOutput{
      "total", *Tensor::FromValues<float>({1}, std::span<const float>(logits).first(1)), {}});
  first->Complete(std::move(response));
  // "total" cannot be split by row: every output of a row must come from one variant.
  ASSERT_EQ(runner_.sent.size(), 1u);
  EXPECT_EQ(runner_.sent[0]->inputs[0].tensor.data(), image);
  Answer(runner_.Take(), {0.6f, 0.6f}, 100);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(Param("cascade"), "escalated");
  EXPECT_EQ(EscalatedRows(), 2);
}

TEST(CascadeRowsConfigTest, ARouterWithoutBatchingEscalatesWholeRequests) {
  config::ModelRouting config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(variant { name: "small" model_name: "mlp" }
           variant { name: "large" model_name: "cnn" }
           cascade { first: "small" second: "large" output: "logits" threshold: 0.8 })pb",
      &config));
  std::shared_ptr<const RoutingPolicy> policy = *RoutingPolicy::Create("cascade", config);
  FakeClock clock;
  RowRunner runner;
  std::shared_ptr<Cascade> cascade = Cascade::Create(policy, 1, /*batching=*/false, &clock);
  auto request = std::make_unique<InferRequest>();
  const std::vector<float> image = {0, 0.5f, 1, 1.5f};
  request->inputs.push_back(
      InferInput{"image", *Tensor::FromValues<float>({2, 2}, std::span<const float>(image)), {}});
  absl::StatusOr<InferResponse> result = absl::UnknownError("not answered");
  request->on_complete = [&](absl::StatusOr<InferResponse> r) { result = std::move(r); };
  const std::byte* bytes = request->inputs[0].tensor.data();
  cascade->Run(std::move(request), &runner);
  std::unique_ptr<InferRequest> first = runner.Take();
  InferResponse response;
  response.model_name = "mlp";
  response.model_version = "1";
  const std::vector<float> logits = {0.9f, 0.1f, 0.5f, 0.5f};
  response.outputs.push_back(InferOutput{
      "logits", *Tensor::FromValues<float>({2, 2}, std::span<const float>(logits)), {}});
  first->Complete(std::move(response));
  ASSERT_EQ(runner.sent.size(), 1u);
  EXPECT_EQ(runner.sent[0]->inputs[0].tensor.data(), bytes);
  EXPECT_EQ(runner.sent[0]->inputs[0].tensor.shape(), (Shape{2, 2}));
  runner.Take()->Complete(absl::UnavailableError("down"));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace brigade::route
