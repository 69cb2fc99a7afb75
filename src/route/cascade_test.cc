#include "route/cascade.h"

#include <string>
#include <vector>

#include "core/strings.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace brigade::route {
namespace {

class FakeRunner final : public StepRunner {
 public:
  void RunStep(std::unique_ptr<InferRequest> step) override { sent.push_back(std::move(step)); }

  // Answers the oldest pending request with `logits` ([rows, classes]) as output "logits".
  void Answer(std::vector<float> logits, int64_t rows) {
    ASSERT_FALSE(sent.empty());
    std::unique_ptr<InferRequest> step = std::move(sent.front());
    sent.erase(sent.begin());
    InferResponse response;
    response.model_name = step->model_name;
    response.model_version = "1";
    const int64_t classes = static_cast<int64_t>(logits.size()) / rows;
    response.outputs.push_back(InferOutput{
        "logits", *Tensor::FromValues<float>({rows, classes}, std::span<const float>(logits)), {}});
    response.outputs.push_back(InferOutput{
        "extra", *Tensor::FromValues<float>({1}, std::span<const float>(logits).first(1)), {}});
    step->Complete(std::move(response));
  }

  void Fail(absl::Status status) {
    std::unique_ptr<InferRequest> step = std::move(sent.front());
    sent.erase(sent.begin());
    step->Complete(std::move(status));
  }

  std::vector<std::unique_ptr<InferRequest>> sent;
};

class CascadeTest : public ::testing::Test {
 protected:
  void Make(std::string_view extra = "") {
    config::ModelRouting config;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        StrCat(R"pb(variant { name: "small" model_name: "mlp" }
                    variant { name: "large" model_name: "cnn" model_version: 3 }
                    cascade { first: "small" second: "large" output: "logits" threshold: 0.8
               )pb",
               extra, "}"),
        &config));
    auto policy = RoutingPolicy::Create("cascade", config);
    ASSERT_TRUE(policy.ok()) << policy.status();
    policy_ = *std::move(policy);
    cascade_ = Cascade::Create(policy_, 2, batching_, &clock_);
  }

  std::unique_ptr<InferRequest> Request() {
    auto request = std::make_unique<InferRequest>();
    request->id = "q";
    const float image[] = {0.5f, 0.25f};
    request->inputs.push_back(
        InferInput{"image", *Tensor::FromValues<float>({1, 2}, std::span<const float>(image)), {}});
    request->on_complete = [this](absl::StatusOr<InferResponse> result) {
      ++answers_;
      result_ = std::move(result);
    };
    return request;
  }

  std::string Param(std::string_view key) const {
    std::optional<std::string_view> value = result_->parameters.GetString(key);
    return value.has_value() ? std::string(*value) : "";
  }

  // These tests are of whole requests: a router without batching (cascade_rows_test.cc has the
  // row-level escalation of a batching one).
  bool batching_ = false;
  FakeClock clock_;
  FakeRunner runner_;
  std::shared_ptr<const RoutingPolicy> policy_;
  std::shared_ptr<Cascade> cascade_;
  int answers_ = 0;
  absl::StatusOr<InferResponse> result_ = absl::UnknownError("not answered");
};

TEST_F(CascadeTest, AConfidentSmallVariantAnswersAlone) {
  Make();
  std::unique_ptr<InferRequest> request = Request();
  const std::byte* input = request->inputs[0].tensor.data();
  cascade_->Run(std::move(request), &runner_);
  ASSERT_EQ(runner_.sent.size(), 1u);
  EXPECT_EQ(runner_.sent[0]->model_name, "mlp");
  EXPECT_EQ(runner_.sent[0]->inputs[0].tensor.data(), input);  // shared, not copied
  runner_.Answer({0.9f, 0.1f}, 1);
  ASSERT_EQ(answers_, 1);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(result_->model_name, "cascade");
  EXPECT_EQ(result_->model_version, "2");
  EXPECT_EQ(Param("routed_to"), "mlp:1");
  EXPECT_EQ(Param("cascade"), "accepted");
  EXPECT_EQ(policy_->Counts()[0][static_cast<int>(RouteReason::kCascadeAccepted)], 1u);
}

TEST_F(CascadeTest, WithoutBatchingAnUncertainRowEscalatesTheWholeRequestToTheLargeVariant) {
  Make();
  std::unique_ptr<InferRequest> request = Request();
  const std::byte* input = request->inputs[0].tensor.data();
  cascade_->Run(std::move(request), &runner_);
  // Row 2 is at 0.6 < 0.8.
  runner_.Answer({0.95f, 0.05f, 0.6f, 0.4f}, 2);
  ASSERT_EQ(answers_, 0);
  ASSERT_EQ(runner_.sent.size(), 1u);
  EXPECT_EQ(runner_.sent[0]->model_name, "cnn");
  EXPECT_EQ(runner_.sent[0]->model_version, 3);
  EXPECT_EQ(runner_.sent[0]->inputs[0].tensor.data(), input);
  runner_.Answer({0.55f, 0.45f, 0.3f, 0.7f}, 2);
  ASSERT_EQ(answers_, 1);
  ASSERT_TRUE(result_.ok());
  EXPECT_EQ(Param("routed_to"), "cnn:1");
  EXPECT_EQ(Param("cascade"), "escalated");
  EXPECT_EQ(result_->parameters.GetInt("cascade_escalated_rows"), 1);
  EXPECT_EQ(policy_->Counts()[1][static_cast<int>(RouteReason::kCascadeEscalated)], 1u);
}

TEST_F(CascadeTest, LogitsAreScoredOnTheirSoftmax) {
  Make("softmax: true");
  cascade_->Run(Request(), &runner_);
  // softmax([2, 0]) = [0.881, 0.119]: confident at 0.8.
  runner_.Answer({2.0f, 0.0f}, 1);
  EXPECT_EQ(answers_, 1);
  cascade_->Run(Request(), &runner_);
  // softmax([1, 0]) = [0.731, 0.269]: not.
  runner_.Answer({1.0f, 0.0f}, 1);
  EXPECT_EQ(answers_, 1);
  ASSERT_EQ(runner_.sent.size(), 1u);
  EXPECT_EQ(runner_.sent[0]->model_name, "cnn");
  runner_.Answer({0.0f, 1.0f}, 1);
  EXPECT_EQ(answers_, 2);
}

TEST_F(CascadeTest, TheMarginScoreIsTopOneMinusTopTwo) {
  auto score = [](std::vector<float> v, auto kind, bool softmax) {
    return *Cascade::LowestScore(
        *Tensor::FromValues<float>({1, static_cast<int64_t>(v.size())}, std::span<const float>(v)),
        kind, softmax);
  };
  EXPECT_NEAR(score({0.5f, 0.3f, 0.2f}, config::ModelRouting::Cascade::MARGIN, false), 0.2, 1e-6);
  EXPECT_NEAR(score({0.5f, 0.3f, 0.2f}, config::ModelRouting::Cascade::MAX_PROBABILITY, false), 0.5,
              1e-6);
  EXPECT_NEAR(score({0.0f, 0.0f}, config::ModelRouting::Cascade::MAX_PROBABILITY, true), 0.5, 1e-9);
  EXPECT_EQ(score({NAN, 0.0f}, config::ModelRouting::Cascade::MAX_PROBABILITY, true), 0.0);
  EXPECT_FALSE(
      Cascade::LowestScore(*Tensor::FromValues<int32_t>({1, 2}, std::vector<int32_t>{1, 2}),
                           config::ModelRouting::Cascade::MARGIN, false)
          .ok());
  EXPECT_FALSE(Cascade::LowestScore(*Tensor::FromValues<float>({1, 1}, std::vector<float>{1}),
                                    config::ModelRouting::Cascade::MARGIN, false)
                   .ok());
}

TEST_F(CascadeTest, AFailingSmallVariantFallsThroughToTheLargeOne) {
  Make();
  cascade_->Run(Request(), &runner_);
  runner_.Fail(absl::UnavailableError("mlp is not loaded"));
  ASSERT_EQ(runner_.sent.size(), 1u);
  EXPECT_EQ(runner_.sent[0]->model_name, "cnn");
  runner_.Fail(absl::UnavailableError("cnn is not loaded"));
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result_.status().message(), "router 'cascade' variant 'large': cnn is not loaded");
}

TEST_F(CascadeTest, OnlyTheOutputsAskedForAreAnsweredThoughTheScoredOneIsRequested) {
  Make();
  std::unique_ptr<InferRequest> request = Request();
  request->outputs.push_back(RequestedOutput{"extra", {}, false});
  cascade_->Run(std::move(request), &runner_);
  ASSERT_EQ(runner_.sent[0]->outputs.size(), 2u);
  EXPECT_EQ(runner_.sent[0]->outputs[1].name, "logits");
  runner_.Answer({0.9f, 0.1f}, 1);
  ASSERT_TRUE(result_.ok());
  ASSERT_EQ(result_->outputs.size(), 1u);
  EXPECT_EQ(result_->outputs[0].name, "extra");
}

TEST_F(CascadeTest, AnEscalatedRequestAsksTheLargeVariantForTheClientsOutputsOnly) {
  Make();
  std::unique_ptr<InferRequest> request = Request();
  request->outputs.push_back(RequestedOutput{"extra", {}, false});
  const std::byte* input = request->inputs[0].tensor.data();
  cascade_->Run(std::move(request), &runner_);
  ASSERT_EQ(runner_.sent[0]->outputs.size(), 2u);  // the scored output added for the small one
  runner_.Answer({0.6f, 0.4f}, 1);
  ASSERT_EQ(runner_.sent.size(), 1u);
  EXPECT_EQ(runner_.sent[0]->model_name, "cnn");
  ASSERT_EQ(runner_.sent[0]->inputs.size(), 1u);
  EXPECT_EQ(runner_.sent[0]->inputs[0].name, "image");
  EXPECT_EQ(runner_.sent[0]->inputs[0].tensor.data(), input);
  ASSERT_EQ(runner_.sent[0]->outputs.size(), 1u);
  EXPECT_EQ(runner_.sent[0]->outputs[0].name, "extra");
  runner_.Answer({0.3f, 0.7f}, 1);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(Param("cascade"), "escalated");
}

TEST(CascadeConfigTest, ACascadeIsCheckedWhenThePolicyIsCreated) {
  auto error = [](std::string_view text) {
    config::ModelRouting config;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text), &config));
    auto policy = RoutingPolicy::Create("r", config);
    return policy.ok() ? std::string() : std::string(policy.status().message());
  };
  EXPECT_EQ(error(R"pb(variant { model_name: "a" }
                       variant { model_name: "b" }
                       cascade { first: "a" second: "a" threshold: 0.5 })pb"),
            "router 'r': cascade.first and cascade.second are the same variant");
  EXPECT_EQ(error(R"pb(variant { model_name: "a" }
                       variant { model_name: "b" }
                       cascade { first: "a" second: "b" threshold: 1.5 })pb"),
            "router 'r': cascade.threshold 1.5 is not between 0 and 1");
  EXPECT_EQ(error(R"pb(variant { model_name: "a" }
                       variant { model_name: "b" }
                       rule { parameter: "x" value: "1" variant: "a" }
                       cascade { first: "a" second: "b" threshold: 0.5 })pb"),
            "router 'r': a cascade decides alone: remove its rules and splits");
  EXPECT_EQ(error(R"pb(variant { model_name: "a" }
                       variant { model_name: "b" }
                       cascade { first: "a" second: "c" threshold: 0.5 })pb"),
            "router 'r': cascade.second names variant 'c', which is not one of the router's "
            "variants");
}

}  // namespace
}  // namespace brigade::route
