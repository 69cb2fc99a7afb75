// Switch and fusion steps (Brigade's fields of ensemble_scheduling): the plan's checks and what
// runs. Models are fakes answered by the test; the clock is a FakeClock.
#include <functional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "route/ensemble.h"

namespace brigade::route {
namespace {

// "router": X [-1,2] -> SCORES [-1,3]; "a", "b", "c": X [-1,2] -> Y [-1,2]; "fuser": optional A, B
// [-1,2] -> Y [-1,2]; "pair": the same, both required.
absl::StatusOr<StepModelSignature> Lookup(std::string_view model, int64_t /*version*/) {
  auto tensor = [](std::string name, int64_t width, DataType type = DataType::kFp32,
                   bool optional = false) {
    return TensorSignature{std::move(name), type, {-1, width}, optional};
  };
  if (model == "router") return StepModelSignature{8, {tensor("X", 2)}, {tensor("SCORES", 3)}};
  if (model == "a" || model == "b" || model == "c") {
    return StepModelSignature{8, {tensor("X", 2)}, {tensor("Y", 2)}};
  }
  if (model == "fuser") {
    return StepModelSignature{
        8,
        {tensor("A", 2, DataType::kFp32, true), tensor("B", 2, DataType::kFp32, true)},
        {tensor("Y", 2)}};
  }
  if (model == "pair") {
    return StepModelSignature{8, {tensor("A", 2), tensor("B", 2)}, {tensor("Y", 2)}};
  }
  return absl::NotFoundError(StrCat("no model '", model, "'"));
}

// A router's scores pick one of three branches; branch b runs two steps in a row; a SELECT
// joins the branches and a CONCAT puts the router's scores beside the answer.
constexpr std::string_view kSliced = R"pb(
  name: "sliced"
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
    name: "BOTH"
    data_type: TYPE_FP32
    dims: [ 5 ]
  }
  ensemble_scheduling {
    step {
      model_name: "router"
      input_map { key: "X" value: "IN" }
      output_map { key: "SCORES" value: "scores" }
    }
    step {
      name: "pick"
      switch {
        tensor: "scores"
        select: ARGMAX
        branch { name: "a" value: "0" step: "run_a" }
        branch { name: "b" value: "1" step: "run_b" step: "again_b" }
        branch { name: "c" value: "2" step: "run_c" }
      }
    }
    step {
      name: "run_a"
      model_name: "a"
      input_map { key: "X" value: "IN" }
      output_map { key: "Y" value: "ya" }
    }
    step {
      name: "run_b"
      model_name: "b"
      input_map { key: "X" value: "IN" }
      output_map { key: "Y" value: "yb1" }
    }
    step {
      name: "again_b"
      model_name: "b"
      input_map { key: "X" value: "yb1" }
      output_map { key: "Y" value: "yb" }
    }
    step {
      name: "run_c"
      model_name: "c"
      input_map { key: "X" value: "IN" }
      output_map { key: "Y" value: "yc" }
    }
    step {
      name: "join"
      fusion {
        op: SELECT
        input: [ "ya", "yb", "yc" ]
        output: "OUT"
      }
    }
    step {
      fusion {
        op: CONCAT
        input: [ "scores", "OUT" ]
        output: "BOTH"
      }
    }
  }
)pb";

// The branch from a request parameter, with a default.
constexpr std::string_view kByParameter = R"pb(
  name: "tiered"
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
  ensemble_scheduling {
    step {
      switch {
        parameter: "tier"
        branch { name: "fast" value: "free" step: "fast" }
        branch { name: "accurate" value: "paid" value: "gold" step: "accurate" }
        default_branch: "fast"
      }
    }
    step {
      name: "fast"
      model_name: "a"
      input_map { key: "X" value: "IN" }
      output_map { key: "Y" value: "y_fast" }
    }
    step {
      name: "accurate"
      model_name: "b"
      input_map { key: "X" value: "IN" }
      output_map { key: "Y" value: "y_accurate" }
    }
    step {
      fusion {
        op: SELECT
        input: [ "y_fast", "y_accurate" ]
        output: "OUT"
      }
    }
  }
)pb";

config::ModelConfig Parse(std::string_view text) {
  config::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text), &config)) << text;
  return config;
}

// kSliced's SELECT, as Edit() finds it (clang-format writes kSliced's layout).
// clang-format off
constexpr std::string_view kJoin = R"(fusion {
        op: SELECT
        input: [ "ya", "yb", "yc" ]
        output: "OUT"
      })";
// clang-format on

// Replaces the first `from` of `text` with `to`.
std::string Edit(std::string_view text, std::string_view from, std::string_view to) {
  std::string out(text);
  const size_t at = out.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) out.replace(at, from.size(), to);
  return out;
}

std::string LoadError(std::string_view text) {
  absl::StatusOr<std::shared_ptr<const EnsemblePlan>> plan =
      EnsemblePlan::Create(Parse(text), Lookup);
  EXPECT_FALSE(plan.ok()) << "loaded: " << text;
  return plan.ok() ? "" : std::string(plan.status().message());
}

Tensor Floats(Shape shape, std::vector<float> values) {
  return *Tensor::FromValues<float>(std::move(shape), std::span<const float>(values));
}

// Keeps every step request until the test answers it.
class HeldRunner final : public StepRunner {
 public:
  void RunStep(std::unique_ptr<InferRequest> step) override {
    sent.push_back(step->model_name);
    held.push_back(std::move(step));
  }

  // Answers the held request for `model` with `make(its first input)`.
  void Answer(std::string_view model, const std::function<Tensor(const Tensor&)>& make) {
    for (auto it = held.begin(); it != held.end(); ++it) {
      if ((*it)->model_name != model) continue;
      std::unique_ptr<InferRequest> step = std::move(*it);
      held.erase(it);
      InferResponse response;
      response.model_name = step->model_name;
      response.outputs.push_back(
          InferOutput{step->outputs[0].name, make(step->inputs[0].tensor), {}});
      step->Complete(std::move(response));
      return;
    }
    ADD_FAILURE() << "no held request for " << model;
  }

  std::vector<std::string> Held() const {
    std::vector<std::string> names;
    for (const auto& step : held) names.push_back(step->model_name);
    return names;
  }

  std::vector<std::string> sent;  // every model a step was sent to, in order
  std::vector<std::unique_ptr<InferRequest>> held;
};

// y = x * factor, for the fake branch models.
std::function<Tensor(const Tensor&)> Times(float factor) {
  return [factor](const Tensor& x) {
    std::vector<float> out;
    for (float v : x.values<float>()) out.push_back(v * factor);
    return Floats(x.shape(), out);
  };
}

std::function<Tensor(const Tensor&)> Scores(const std::vector<float>& row) {
  return [row](const Tensor&) { return Floats({1, 3}, row); };
}

class EnsembleSwitchTest : public ::testing::Test {
 protected:
  std::shared_ptr<Ensemble> Make(std::string_view text) {
    absl::StatusOr<std::shared_ptr<const EnsemblePlan>> plan =
        EnsemblePlan::Create(Parse(text), Lookup);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) return nullptr;
    return Ensemble::Create(*std::move(plan), 1, &clock_);
  }

  std::unique_ptr<InferRequest> Request() {
    auto request = std::make_unique<InferRequest>();
    request->id = "r1";
    request->cancel = std::make_shared<CancelFlag>();
    request->inputs.push_back(InferInput{"IN", Floats({1, 2}, {1, 2}), {}});
    request->on_complete = [this](absl::StatusOr<InferResponse> result) {
      ++answers_;
      result_ = std::move(result);
    };
    return request;
  }

  std::vector<float> Output(std::string_view name) const {
    if (!result_.ok()) return {};
    const InferOutput* output = result_->FindOutput(name);
    if (output == nullptr) return {};
    return {output->tensor.values<float>().begin(), output->tensor.values<float>().end()};
  }

  FakeClock clock_;
  HeldRunner runner_;
  int answers_ = 0;
  absl::StatusOr<InferResponse> result_ = absl::UnknownError("not answered");
};

TEST_F(EnsembleSwitchTest, TheRouterOutputPicksTheBranchAndUntakenBranchesNeverRun) {
  auto ensemble = Make(kSliced);
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(), &runner_);
  // Every branch step waits for the switch: only the router is sent.
  EXPECT_EQ(runner_.Held(), std::vector<std::string>{"router"});
  runner_.Answer("router", Scores({0.1f, 0.8f, 0.1f}));
  EXPECT_EQ(runner_.Held(), std::vector<std::string>{"b"});
  runner_.Answer("b", Times(2));
  EXPECT_EQ(runner_.Held(), std::vector<std::string>{"b"});  // the branch's second step
  EXPECT_EQ(answers_, 0);
  runner_.Answer("b", Times(3));
  ASSERT_EQ(answers_, 1);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(runner_.sent, (std::vector<std::string>{"router", "b", "b"}));
  EXPECT_EQ(Output("OUT"), (std::vector<float>{6, 12}));
  EXPECT_EQ(Output("BOTH"), (std::vector<float>{0.1f, 0.8f, 0.1f, 6, 12}));
  // What ran, for the trace (a span each), in the order it finished; the switch names its branch.
  std::vector<std::string> ran;
  for (const StepRecord& record : result_->steps) {
    ran.push_back(record.branch.empty() ? record.step : StrCat(record.step, " -> ", record.branch));
  }
  EXPECT_EQ(ran, (std::vector<std::string>{"step 1 (model 'router')", "step 2 (switch 'pick') -> b",
                                           "step 4 (model 'b')", "step 5 (model 'b')",
                                           "step 7 (fusion 'join')", "step 8 (fusion)"}));
}

TEST_F(EnsembleSwitchTest, EachRouterAnswerTakesItsOwnBranch) {
  auto ensemble = Make(kSliced);
  ASSERT_NE(ensemble, nullptr);
  const std::vector<std::pair<std::vector<float>, std::string>> cases = {
      {{0.9f, 0.05f, 0.05f}, "a"}, {{0.2f, 0.2f, 0.6f}, "c"}, {{0.5f, 0.5f, 0.0f}, "a"}};
  for (const auto& [scores, model] : cases) {
    runner_.sent.clear();
    ensemble->Run(Request(), &runner_);
    runner_.Answer("router", Scores(scores));
    ASSERT_EQ(runner_.Held(), std::vector<std::string>{model}) << "scores " << scores[0];
    runner_.Answer(model, Times(-1));
    ASSERT_TRUE(result_.ok()) << result_.status();
    EXPECT_EQ(Output("OUT"), (std::vector<float>{-1, -2}));
    EXPECT_EQ(runner_.sent, (std::vector<std::string>{"router", model}));
  }
}

TEST_F(EnsembleSwitchTest, AParameterPicksTheBranchAndItsAbsenceTakesTheDefault) {
  auto ensemble = Make(kByParameter);
  ASSERT_NE(ensemble, nullptr);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"paid", "b"}, {"gold", "b"}, {"free", "a"}, {"", "a"}, {"unknown", "a"}};
  for (const auto& [tier, model] : cases) {
    std::unique_ptr<InferRequest> request = Request();
    if (!tier.empty()) request->parameters.Set("tier", tier);
    ensemble->Run(std::move(request), &runner_);
    ASSERT_EQ(runner_.Held(), std::vector<std::string>{model}) << "tier '" << tier << "'";
    runner_.Answer(model, Times(10));
    ASSERT_TRUE(result_.ok()) << result_.status();
    EXPECT_EQ(Output("OUT"), (std::vector<float>{10, 20}));
  }
  // Counted for /metrics: "free" matched fast; "" and "unknown" took it as the default.
  const std::vector<Ensemble::BranchCount> counts = ensemble->BranchCounts();
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].step, "step 1 (switch)");
  EXPECT_EQ(counts[0].branch, "fast");
  EXPECT_EQ(counts[0].matched, 1u);
  EXPECT_EQ(counts[0].by_default, 2u);
  EXPECT_EQ(counts[1].branch, "accurate");
  EXPECT_EQ(counts[1].matched, 2u);
  EXPECT_EQ(counts[1].by_default, 0u);
}

TEST_F(EnsembleSwitchTest, AMissingParameterWithoutADefaultIsRefusedNamingIt) {
  auto ensemble = Make(Edit(kByParameter, "default_branch: \"fast\"", ""));
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(), &runner_);
  ASSERT_EQ(answers_, 1);
  EXPECT_TRUE(runner_.sent.empty());
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result_.status().message(),
            "ensemble 'tiered' step 1 (switch): the request has no parameter 'tier', and the "
            "switch has no default_branch");

  std::unique_ptr<InferRequest> request = Request();
  request->parameters.Set("tier", std::string("platinum"));
  ensemble->Run(std::move(request), &runner_);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(
      result_.status().message().find("parameter 'tier' is 'platinum', which no branch lists"),
      std::string::npos)
      << result_.status();
}

TEST_F(EnsembleSwitchTest, AnInputTensorValuePicksTheBranch) {
  constexpr std::string_view kByInput = R"pb(
    name: "by_input"
    platform: "ensemble"
    max_batch_size: 8
    input {
      name: "IN"
      data_type: TYPE_FP32
      dims: [ 2 ]
    }
    input {
      name: "ROUTE"
      data_type: TYPE_INT64
      dims: [ 1 ]
    }
    output {
      name: "OUT"
      data_type: TYPE_FP32
      dims: [ 2 ]
    }
    ensemble_scheduling {
      step {
        switch {
          tensor: "ROUTE"
          branch { value: "7" step: "seven" }
          branch { value: "8" step: "eight" }
        }
      }
      step {
        name: "seven"
        model_name: "a"
        input_map { key: "X" value: "IN" }
        output_map { key: "Y" value: "y7" }
      }
      step {
        name: "eight"
        model_name: "c"
        input_map { key: "X" value: "IN" }
        output_map { key: "Y" value: "y8" }
      }
      step {
        fusion {
          op: SELECT
          input: [ "y7", "y8" ]
          output: "OUT"
        }
      }
    }
  )pb";
  auto ensemble = Make(kByInput);
  ASSERT_NE(ensemble, nullptr);
  std::unique_ptr<InferRequest> request = Request();
  const int64_t route[] = {8};
  request->inputs.push_back(InferInput{
      "ROUTE", *Tensor::FromValues<int64_t>({1, 1}, std::span<const int64_t>(route)), {}});
  ensemble->Run(std::move(request), &runner_);
  EXPECT_EQ(runner_.Held(), std::vector<std::string>{"c"});
  runner_.Answer("c", Times(1));
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(Output("OUT"), (std::vector<float>{1, 2}));
}

TEST_F(EnsembleSwitchTest, FusionsJoinStepsThatAllRan) {
  constexpr std::string_view kAverage = R"pb(
    name: "average"
    platform: "ensemble"
    max_batch_size: 8
    input {
      name: "IN"
      data_type: TYPE_FP32
      dims: [ 2 ]
    }
    output {
      name: "MEAN"
      data_type: TYPE_FP32
      dims: [ 2 ]
    }
    output {
      name: "WEIGHTED"
      data_type: TYPE_FP32
      dims: [ 2 ]
    }
    output {
      name: "MODEL"
      data_type: TYPE_FP32
      dims: [ 2 ]
    }
    ensemble_scheduling {
      step {
        model_name: "a"
        input_map { key: "X" value: "IN" }
        output_map { key: "Y" value: "ya" }
      }
      step {
        model_name: "b"
        input_map { key: "X" value: "IN" }
        output_map { key: "Y" value: "yb" }
      }
      step {
        fusion {
          op: MEAN
          input: [ "ya", "yb" ]
          output: "MEAN"
        }
      }
      step {
        fusion {
          op: WEIGHTED_SUM
          input: [ "ya", "yb" ]
          output: "WEIGHTED"
          weight: [ 0.5, 2 ]
        }
      }
      step {
        model_name: "fuser"
        fusion { op: MODEL }
        input_map { key: "A" value: "ya" }
        input_map { key: "B" value: "yb" }
        output_map { key: "Y" value: "MODEL" }
      }
    }
  )pb";
  auto ensemble = Make(kAverage);
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(), &runner_);
  runner_.Answer("a", Times(2));
  runner_.Answer("b", Times(4));
  ASSERT_EQ(runner_.held.size(), 1u);
  EXPECT_EQ(runner_.held[0]->inputs.size(), 2u);  // the fusion model gets both
  runner_.Answer("fuser", Times(1));
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(Output("MEAN"), (std::vector<float>{3, 6}));
  EXPECT_EQ(Output("WEIGHTED"), (std::vector<float>{9, 18}));
  EXPECT_EQ(Output("MODEL"), (std::vector<float>{2, 4}));
}

TEST_F(EnsembleSwitchTest, AFusionModelGetsOnlyTheTensorsThatExist) {
  // The fusion model reads the request and branch c's answer (an optional input).
  const std::string text = Edit(kSliced, kJoin,
                                R"(model_name: "fuser" fusion { op: MODEL }
              input_map { key: "A" value: "IN" } input_map { key: "B" value: "yc" }
              output_map { key: "Y" value: "OUT" })");
  auto ensemble = Make(text);
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(), &runner_);
  runner_.Answer("router", Scores({0, 0, 1}));
  runner_.Answer("c", Times(5));
  ASSERT_EQ(runner_.Held(), std::vector<std::string>{"fuser"});
  EXPECT_EQ(runner_.held[0]->inputs.size(), 2u);
  runner_.Answer("fuser", Times(1));
  ASSERT_TRUE(result_.ok()) << result_.status();

  ensemble->Run(Request(), &runner_);
  runner_.Answer("router", Scores({1, 0, 0}));
  runner_.Answer("a", Times(5));
  ASSERT_EQ(runner_.Held(), std::vector<std::string>{"fuser"});
  ASSERT_EQ(runner_.held[0]->inputs.size(), 1u);  // branch c did not run: no B
  EXPECT_EQ(runner_.held[0]->inputs[0].name, "A");
  runner_.Answer("fuser", Times(3));
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(Output("OUT"), (std::vector<float>{3, 6}));
}

TEST(EnsembleSwitchPlanTest, BadBranchesFailTheLoadNamingTheStep) {
  EXPECT_EQ(LoadError(Edit(kSliced, "step: \"run_c\"", "step: \"run_d\"")),
            "ensemble 'sliced': branch 'c' of step 2 (switch 'pick') lists step 'run_d', but no "
            "step has that name");
  EXPECT_EQ(LoadError(Edit(kSliced, "step: \"run_c\"", "step: \"run_a\"")),
            "ensemble 'sliced': branch 'c' of step 2 (switch 'pick') lists step 3 (model 'a'), "
            "which branch 'a' of step 2 (switch 'pick') lists too");
  EXPECT_EQ(LoadError(Edit(kSliced, "step: \"run_c\"", "step: \"pick\"")),
            "ensemble 'sliced': branch 'c' of step 2 (switch 'pick') lists the switch itself: the "
            "steps form a cycle through step 2 (switch 'pick')");
  EXPECT_EQ(LoadError(Edit(kSliced, "select: ARGMAX", "select: ARGMAX default_branch: \"d\"")),
            "ensemble 'sliced': step 2 (switch 'pick'): default_branch 'd' is no branch's name");
  EXPECT_EQ(LoadError(Edit(kSliced, "value: \"2\"", "value: \"1\"")),
            "ensemble 'sliced': step 2 (switch 'pick'): value '1' is listed by branch 'b' and by "
            "branch 'c'");
  EXPECT_EQ(LoadError(Edit(kSliced, "tensor: \"scores\"", "tensor: \"score\"")),
            "ensemble 'sliced': step 2 (switch 'pick') reads tensor 'score', which is neither an "
            "ensemble input nor written by a step");
  EXPECT_EQ(LoadError(Edit(kSliced, "value: \"2\"", "")),
            "ensemble 'sliced': step 2 (switch 'pick'): branch 'c' lists no value and is not the "
            "default_branch");
  EXPECT_EQ(LoadError(Edit(kSliced, "name: \"pick\"", "name: \"pick\" retries: 2")),
            "ensemble 'sliced': step 2 (switch 'pick') runs no model: it takes no model_name, "
            "model_version, input_map, output_map, fallback_model_name, retries or "
            "timeout_microseconds");
  EXPECT_EQ(LoadError(Edit(kSliced, "op: SELECT", "op: SELECT axis: 1")),
            "ensemble 'sliced': step 7 (fusion 'join'): axis is for CONCAT, not SELECT");
  EXPECT_EQ(LoadError(Edit(kSliced, "select: ARGMAX", "")),
            "ensemble 'sliced': step 2 (switch 'pick'): tensor 'scores' has shape [-1,3], 3 "
            "values per row; VALUE reads one (ARGMAX reads scores)");
}

TEST(EnsembleSwitchPlanTest, ASwitchDecidedByItsOwnBranchIsACycle) {
  // The switch reads what a step of its own branch writes.
  const std::string text = Edit(kSliced, "tensor: \"scores\"", "tensor: \"ya\"");
  EXPECT_NE(LoadError(Edit(text, "select: ARGMAX", "")).find("the steps form a cycle through"),
            std::string::npos);
}

TEST(EnsembleSwitchPlanTest, OnlyAFusionJoinsBranchesAndOutputsExistOnEveryPath) {
  // A model step reading two branches' tensors.
  EXPECT_EQ(LoadError(Edit(kSliced, R"(input_map { key: "X" value: "yb1" })",
                           R"(input_map { key: "X" value: "ya" })")),
            "ensemble 'sliced': step 5 (model 'b') reads what exists only when branch 'a' of step "
            "2 (switch 'pick') is taken (tensor 'ya') and what exists only when branch 'b' of "
            "step 2 (switch 'pick') is taken: only a fusion step joins branches");
  // A branch's tensor as an ensemble output.
  EXPECT_EQ(LoadError(Edit(kSliced, "name: \"OUT\"", "name: \"ya\"")),
            "ensemble 'sliced': output 'ya' exists only when branch 'a' of step 2 (switch 'pick') "
            "is taken (step 3 (model 'a') writes it): a fusion step can join the branches");
  EXPECT_EQ(LoadError(Edit(kSliced, R"(output_map { key: "Y" value: "yc" })",
                           R"(output_map { key: "Y" value: "BOTH" })")),
            "ensemble 'sliced': tensor 'BOTH' is written by step 8 (fusion) and also by step 6 "
            "(model 'c')");
  // A fusion that one branch gives nothing.
  EXPECT_EQ(LoadError(Edit(kSliced, R"(input: [ "ya", "yb", "yc" ])", R"(input: [ "ya", "yb" ])")),
            "ensemble 'sliced': step 7 (fusion 'join'): none of its inputs exists when branch 'c' "
            "of step 2 (switch 'pick') is taken");
}

TEST(EnsembleSwitchPlanTest, FusionTypeAndShapeMismatchesAreNamed) {
  EXPECT_EQ(LoadError(Edit(kSliced, "op: CONCAT", "op: MEAN")),
            "ensemble 'sliced': step 8 (fusion): tensor 'OUT' has shape [-1,2] but 'scores' has "
            "[-1,3]");
  EXPECT_EQ(LoadError(Edit(kSliced, "output: \"BOTH\"", "output: \"BOTH\" axis: 2")),
            "ensemble 'sliced': step 8 (fusion): axis 2 is outside tensor 'scores' of shape "
            "[-1,3] (the batch dimension cannot be joined)");
  // The concatenation is [-1,5]: declaring it otherwise is a mismatch with the output.
  EXPECT_EQ(LoadError(Edit(kSliced, "dims: [ 5 ]", "dims: [ 4 ]")),
            "ensemble 'sliced': output 'BOTH' is declared FP32 [-1,4] but step 8 (fusion) writes "
            "FP32 [-1,5]");
  // A MODEL fusion whose model needs an input a branch may not write.
  const std::string text =
      Edit(kSliced, kJoin,
           R"(model_name: "pair" fusion { op: MODEL } input_map { key: "A" value: "IN" }
              input_map { key: "B" value: "yc" } output_map { key: "Y" value: "OUT" })");
  EXPECT_EQ(LoadError(text),
            "ensemble 'sliced': step 7 (model 'pair'): input 'B' reads tensor 'yc', which exists "
            "only when branch 'c' of step 2 (switch 'pick') is taken, so the model must declare "
            "it optional");
}

}  // namespace
}  // namespace brigade::route
