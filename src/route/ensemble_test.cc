#include "route/ensemble.h"

#include <string>
#include <vector>

#include "core/strings.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace brigade::route {
namespace {

absl::StatusOr<StepModelSignature> Lookup(std::string_view model, int64_t /*version*/) {
  auto fp32 = [](std::string name) {
    return TensorSignature{std::move(name), DataType::kFp32, {-1, 2}, false};
  };
  if (model == "double" || model == "double_small" || model == "negate") {
    return StepModelSignature{8, {fp32("X")}, {fp32("Y")}};
  }
  if (model == "add") return StepModelSignature{8, {fp32("A"), fp32("B")}, {fp32("SUM")}};
  return absl::NotFoundError("unknown");
}

// IN -> double -> d ; IN -> negate -> n ; (d, n) -> add -> OUT, and d is also an output.
constexpr std::string_view kDiamond = R"pb(
  name: "diamond"
  platform: "ensemble"
  max_batch_size: 8
  input {
    name: "IN"
    data_type: TYPE_FP32
    dims: [ 2 ]
  }
  output {
    name: "OUT"
    data_type: TYPE_FP32
    dims: [ 2 ]
  }
  output {
    name: "DOUBLED"
    data_type: TYPE_FP32
    dims: [ 2 ]
  }
  ensemble_scheduling {
    step {
      model_name: "double"
      input_map { key: "X" value: "IN" }
      output_map { key: "Y" value: "DOUBLED" }
      retries: 1
      fallback_model_name: "double_small"
      timeout_microseconds: 1000
    }
    step {
      model_name: "negate"
      input_map { key: "X" value: "IN" }
      output_map { key: "Y" value: "negated" }
    }
    step {
      model_name: "add"
      input_map { key: "A" value: "DOUBLED" }
      input_map { key: "B" value: "negated" }
      output_map { key: "SUM" value: "OUT" }
    }
  }
)pb";

// Keeps every step request until the test answers it, so tests decide order and timing.
class FakeRunner final : public StepRunner {
 public:
  void RunStep(std::unique_ptr<InferRequest> step) override { sent.push_back(std::move(step)); }

  // Answers the pending step request for `model` by applying `f` to its first input.
  void Answer(std::string_view model, float (*f)(float, float)) {
    std::unique_ptr<InferRequest> step = Take(model);
    ASSERT_NE(step, nullptr) << "no pending request for " << model;
    const Tensor& a = step->inputs[0].tensor;
    const Tensor* b = step->inputs.size() > 1 ? &step->inputs[1].tensor : nullptr;
    std::vector<float> out;
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      out.push_back(f(a.values<float>()[i], b != nullptr ? b->values<float>()[i] : 0.0f));
    }
    InferResponse response;
    response.outputs.push_back(
        InferOutput{step->outputs[0].name,
                    *Tensor::FromValues<float>(a.shape(), std::span<const float>(out)),
                    {}});
    step->Complete(std::move(response));
  }

  void Fail(std::string_view model, absl::Status status) {
    std::unique_ptr<InferRequest> step = Take(model);
    ASSERT_NE(step, nullptr) << "no pending request for " << model;
    step->Complete(std::move(status));
  }

  std::unique_ptr<InferRequest> Take(std::string_view model) {
    for (auto it = sent.begin(); it != sent.end(); ++it) {
      if ((*it)->model_name == model) {
        std::unique_ptr<InferRequest> step = std::move(*it);
        sent.erase(it);
        return step;
      }
    }
    return nullptr;
  }

  std::vector<std::string> Pending() const {
    std::vector<std::string> names;
    for (const auto& step : sent) names.push_back(step->model_name);
    return names;
  }

  std::vector<std::unique_ptr<InferRequest>> sent;
};

float Double(float x, float) { return 2 * x; }
float Negate(float x, float) { return -x; }
float Add(float a, float b) { return a + b; }

class EnsembleTest : public ::testing::Test {
 protected:
  std::shared_ptr<Ensemble> Make(std::string_view text) {
    config::ModelConfig config;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text), &config));
    absl::StatusOr<std::shared_ptr<const EnsemblePlan>> plan = EnsemblePlan::Create(config, Lookup);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return Ensemble::Create(*std::move(plan), 1, &clock_);
  }

  // A request for the ensemble with IN = [[1, 2]]; its answer lands in `result_`.
  std::unique_ptr<InferRequest> Request() {
    auto request = std::make_unique<InferRequest>();
    request->id = "r1";
    request->model_name = "diamond";
    request->parameters.Set("user_tier", std::string("gold"));
    request->cancel = std::make_shared<CancelFlag>();
    const float in[] = {1, 2};
    request->inputs.push_back(
        InferInput{"IN", *Tensor::FromValues<float>({1, 2}, std::span<const float>(in)), {}});
    request->on_complete = [this](absl::StatusOr<InferResponse> result) {
      ++answers_;
      result_ = std::move(result);
    };
    return request;
  }

  static std::vector<float> Values(const InferResponse& response, std::string_view name) {
    const InferOutput* output = response.FindOutput(name);
    if (output == nullptr) return {};
    std::span<const float> values = output->tensor.values<float>();
    return std::vector<float>(values.begin(), values.end());
  }

  FakeClock clock_;
  FakeRunner runner_;
  int answers_ = 0;
  absl::StatusOr<InferResponse> result_ = absl::UnknownError("not answered");
};

TEST_F(EnsembleTest, IndependentStepsAreInFlightTogetherAndTheJoinWaitsForBoth) {
  auto ensemble = Make(kDiamond);
  ensemble->Run(Request(), &runner_);
  // Both branches read only the request: both are sent at once.
  EXPECT_EQ(runner_.Pending(), (std::vector<std::string>{"double", "negate"}));
  runner_.Answer("negate", Negate);
  EXPECT_EQ(runner_.Pending(), std::vector<std::string>{"double"});
  runner_.Answer("double", Double);
  EXPECT_EQ(runner_.Pending(), std::vector<std::string>{"add"});
  EXPECT_EQ(answers_, 0);
  runner_.Answer("add", Add);
  ASSERT_EQ(answers_, 1);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(result_->model_name, "diamond");
  EXPECT_EQ(result_->model_version, "1");
  EXPECT_EQ(result_->id, "r1");
  // OUT = 2x + (-x) = x; DOUBLED = 2x; in the config's order.
  ASSERT_EQ(result_->outputs.size(), 2u);
  EXPECT_EQ(result_->outputs[0].name, "OUT");
  EXPECT_EQ(Values(*result_, "OUT"), (std::vector<float>{1, 2}));
  EXPECT_EQ(Values(*result_, "DOUBLED"), (std::vector<float>{2, 4}));
}

TEST_F(EnsembleTest, StepRequestsCarryTheRequestAndShareItsTensors) {
  auto ensemble = Make(kDiamond);
  std::unique_ptr<InferRequest> request = Request();
  const std::byte* in_data = request->inputs[0].tensor.data();
  request->priority = 2;
  request->deadline = Deadline::AtNs(clock_.NowNs() + 50'000'000);
  ensemble->Run(std::move(request), &runner_);
  std::unique_ptr<InferRequest>& doubler = runner_.sent[0];
  ASSERT_EQ(doubler->model_name, "double");
  EXPECT_EQ(doubler->model_version, -1);
  EXPECT_EQ(doubler->id, "r1");
  EXPECT_EQ(doubler->priority, 2u);
  ASSERT_EQ(doubler->inputs.size(), 1u);
  EXPECT_EQ(doubler->inputs[0].name, "X");
  // No bytes copied between the request and its steps.
  EXPECT_EQ(doubler->inputs[0].tensor.data(), in_data);
  ASSERT_EQ(doubler->outputs.size(), 1u);
  EXPECT_EQ(doubler->outputs[0].name, "Y");
  ASSERT_NE(doubler->parameters.Find("user_tier"), nullptr);
  // The step's timeout (1 ms) is earlier than the request's 50 ms deadline; the other step has
  // none of its own.
  EXPECT_EQ(doubler->deadline.ns(), clock_.NowNs() + 1'000'000);
  EXPECT_EQ(runner_.sent[1]->deadline.ns(), clock_.NowNs() + 50'000'000);
  EXPECT_EQ(doubler->cancel, runner_.sent[1]->cancel);
  runner_.Fail("double", absl::InternalError("x"));
  // Any failure of "double" tries its fallback before the request fails.
  runner_.Fail("double_small", absl::InternalError("x"));
  runner_.Fail("negate", absl::InternalError("y"));
  EXPECT_TRUE(runner_.sent.empty());
  EXPECT_EQ(answers_, 1);
}

TEST_F(EnsembleTest, AnswerHasOnlyTheOutputsTheRequestNamed) {
  auto ensemble = Make(kDiamond);
  std::unique_ptr<InferRequest> request = Request();
  request->outputs.push_back(RequestedOutput{"DOUBLED", {}, false});
  ensemble->Run(std::move(request), &runner_);
  runner_.Answer("double", Double);
  runner_.Answer("negate", Negate);
  runner_.Answer("add", Add);
  ASSERT_TRUE(result_.ok());
  ASSERT_EQ(result_->outputs.size(), 1u);
  EXPECT_EQ(result_->outputs[0].name, "DOUBLED");
}

TEST_F(EnsembleTest, AFailedStepFailsTheRequestOnceNamingTheStep) {
  auto ensemble = Make(kDiamond);
  ensemble->Run(Request(), &runner_);
  runner_.Fail("negate", absl::InvalidArgumentError("model 'negate' input 'X': bad"));
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result_.status().message(),
            "ensemble 'diamond' step 2 (model 'negate'): model 'negate' input 'X': bad");
  // The branch still in flight finishes, and nothing more is sent.
  runner_.Answer("double", Double);
  EXPECT_TRUE(runner_.Pending().empty());
  EXPECT_EQ(answers_, 1);
}

TEST_F(EnsembleTest, RetryableFailuresAreRetriedThenTheFallbackRuns) {
  auto ensemble = Make(kDiamond);
  ensemble->Run(Request(), &runner_);
  runner_.Answer("negate", Negate);
  // retries: 1 -> a second attempt on "double", then "double_small".
  runner_.Fail("double", absl::UnavailableError("queue full"));
  EXPECT_EQ(runner_.Pending(), std::vector<std::string>{"double"});
  runner_.Fail("double", absl::ResourceExhaustedError("queue full"));
  EXPECT_EQ(runner_.Pending(), std::vector<std::string>{"double_small"});
  runner_.Answer("double_small", Double);
  runner_.Answer("add", Add);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(Values(*result_, "OUT"), (std::vector<float>{1, 2}));
}

TEST_F(EnsembleTest, ErrorsThatRetryingCannotFixGoStraightToTheFallback) {
  auto ensemble = Make(kDiamond);
  ensemble->Run(Request(), &runner_);
  runner_.Fail("double", absl::NotFoundError("model 'double' is not loaded"));
  EXPECT_EQ(runner_.Pending(), (std::vector<std::string>{"negate", "double_small"}));
  runner_.Fail("double_small", absl::NotFoundError("model 'double_small' is not loaded"));
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(result_.status().message(),
            "ensemble 'diamond' step 1 (model 'double'): model 'double_small' is not loaded");
  runner_.Answer("negate", Negate);
  EXPECT_EQ(answers_, 1);
}

TEST_F(EnsembleTest, ACancelledRequestSendsNoFurtherStep) {
  auto ensemble = Make(kDiamond);
  std::unique_ptr<InferRequest> request = Request();
  std::shared_ptr<CancelFlag> cancel = request->cancel;
  ensemble->Run(std::move(request), &runner_);
  runner_.Answer("double", Double);
  cancel->Cancel();
  runner_.Answer("negate", Negate);
  // "add" would be next; it is not sent.
  EXPECT_TRUE(runner_.Pending().empty());
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(result_.status().message(),
            "ensemble 'diamond' step 3 (model 'add'): the request was cancelled");
}

TEST_F(EnsembleTest, ARequestPastItsDeadlineSendsNoFurtherStep) {
  auto ensemble = Make(kDiamond);
  std::unique_ptr<InferRequest> request = Request();
  request->deadline = Deadline::AtNs(clock_.NowNs() + 5'000'000);
  ensemble->Run(std::move(request), &runner_);
  runner_.Answer("double", Double);
  clock_.AdvanceNs(6'000'000);
  runner_.Answer("negate", Negate);
  EXPECT_TRUE(runner_.Pending().empty());
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(EnsembleTest, MaxInflightRequestsQueuesStepRequestsInOrderAndBoundsTheQueue) {
  std::string text(kDiamond);
  text.insert(text.find("ensemble_scheduling {") + 21,
              " max_inflight_requests: 1 step_queue_size: 1 ");
  auto ensemble = Make(text);
  int answered = 0;
  std::vector<absl::StatusOr<InferResponse>> results;
  for (int i = 0; i < 3; ++i) {
    std::unique_ptr<InferRequest> request = Request();
    request->id = StrCat("r", i);
    request->on_complete = [&](absl::StatusOr<InferResponse> result) {
      ++answered;
      results.push_back(std::move(result));
    };
    ensemble->Run(std::move(request), &runner_);
  }
  // r0's steps are in flight, r1's wait, r2 found the one-request queues full.
  EXPECT_EQ(runner_.Pending(), (std::vector<std::string>{"double", "negate"}));
  ASSERT_EQ(answered, 1);
  EXPECT_EQ(results[0].status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(results[0].status().message(),
            "ensemble 'diamond' step 1 (model 'double'): its wait queue is full (1 requests)");
  std::vector<Ensemble::StepLoad> load = ensemble->Load();
  EXPECT_EQ(load[0].in_flight, 1);
  EXPECT_EQ(load[0].waiting, 1);
  // Finishing r0's "double" lets r1's through.
  runner_.Answer("double", Double);
  EXPECT_EQ(runner_.sent.back()->model_name, "double");
  EXPECT_EQ(runner_.sent.back()->id, "r1");
  runner_.Answer("negate", Negate);
  runner_.Answer("add", Add);
  runner_.Answer("double", Double);
  runner_.Answer("negate", Negate);
  runner_.Answer("add", Add);
  EXPECT_EQ(answered, 3);
  load = ensemble->Load();
  for (const Ensemble::StepLoad& step : load) {
    EXPECT_EQ(step.in_flight, 0);
    EXPECT_EQ(step.waiting, 0);
  }
}

TEST_F(EnsembleTest, AnOptionalInputTheRequestOmittedIsOmittedFromTheStep) {
  auto ensemble = Make(kDiamond);
  std::unique_ptr<InferRequest> request = Request();
  request->inputs[0].tensor = Tensor();
  ensemble->Run(std::move(request), &runner_);
  ASSERT_EQ(runner_.sent.size(), 2u);
  EXPECT_TRUE(runner_.sent[0]->inputs.empty());
  runner_.Fail("double", absl::InvalidArgumentError("missing X"));
  runner_.Fail("double_small", absl::InvalidArgumentError("missing X"));
  runner_.Fail("negate", absl::InvalidArgumentError("missing X"));
}

}  // namespace
}  // namespace brigade::route
