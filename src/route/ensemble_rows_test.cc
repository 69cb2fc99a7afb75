// A switch whose rows pick different branches: each branch runs on its rows, and a SELECT fusion
// puts their answers back in the request's order. Models are fakes answered by the test.
#include <functional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "route/ensemble.h"

namespace brigade::route {
namespace {

// "router": X [-1,2] -> SCORES [-1,2]; "a", "b", "c", "d": X [-1,2] -> Y [-1,2]; "fuser": optional
// A, B
// [-1,2] -> Y [-1,2].
absl::StatusOr<StepModelSignature> RowLookup(std::string_view model, int64_t /*version*/) {
  auto tensor = [](std::string name, bool optional = false) {
    return TensorSignature{std::move(name), DataType::kFp32, {-1, 2}, optional};
  };
  if (model == "router") return StepModelSignature{8, {tensor("X")}, {tensor("SCORES")}};
  if (model == "a" || model == "b" || model == "c" || model == "d") {
    return StepModelSignature{8, {tensor("X")}, {tensor("Y")}};
  }
  if (model == "fuser") {
    return StepModelSignature{8, {tensor("A", true), tensor("B", true)}, {tensor("Y")}};
  }
  return absl::NotFoundError(StrCat("no model '", model, "'"));
}

// The router's scores pick branch a or b per row; b runs two steps in a row; a SELECT joins
// the branches ("join", replaced by the tests that try other fusions) and a CONCAT puts the
// router's scores beside the answer.
constexpr std::string_view kRows = R"pb(
  name: "rows"
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
    dims: [ 4 ]
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
      name: "join"
      fusion {
        op: SELECT
        input: [ "ya", "yb" ]
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

// kRows's SELECT, as Replace() finds it (clang-format writes kRows's layout).
// clang-format off
constexpr std::string_view kSelect = R"(fusion {
        op: SELECT
        input: [ "ya", "yb" ]
        output: "OUT"
      })";
// clang-format on

std::string Replace(std::string_view text, std::string_view from, std::string_view to) {
  std::string out(text);
  const size_t at = out.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) out.replace(at, from.size(), to);
  return out;
}

Tensor RowFloats(Shape shape, std::vector<float> values) {
  return *Tensor::FromValues<float>(std::move(shape), std::span<const float>(values));
}

std::vector<float> ValuesOf(const Tensor& tensor) {
  return {tensor.values<float>().begin(), tensor.values<float>().end()};
}

// Keeps every step request until the test answers it.
class RowsRunner final : public StepRunner {
 public:
  void RunStep(std::unique_ptr<InferRequest> step) override { held.push_back(std::move(step)); }

  // The oldest held request for `model`, or null.
  InferRequest* Find(std::string_view model) {
    for (auto& step : held) {
      if (step->model_name == model) return step.get();
    }
    return nullptr;
  }

  // Answers the oldest held request for `model` with `make(its first input)`.
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

  std::vector<std::unique_ptr<InferRequest>> held;
};

// y = x * factor + offset.
std::function<Tensor(const Tensor&)> Affine(float factor, float offset) {
  return [factor, offset](const Tensor& x) {
    std::vector<float> out;
    for (float v : x.values<float>()) out.push_back(v * factor + offset);
    return RowFloats(x.shape(), out);
  };
}

// Router scores for the rows' branches: 0 picks a, 1 picks b.
std::function<Tensor(const Tensor&)> Picks(const std::vector<int>& branches) {
  return [branches](const Tensor&) {
    std::vector<float> scores;
    for (int b : branches) {
      scores.push_back(b == 0 ? 1.0f : 0.0f);
      scores.push_back(b == 0 ? 0.0f : 1.0f);
    }
    return RowFloats({static_cast<int64_t>(branches.size()), 2}, scores);
  };
}

class EnsembleRowsTest : public ::testing::Test {
 protected:
  std::shared_ptr<Ensemble> Make(std::string_view text) {
    config::ModelConfig config;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text), &config));
    absl::StatusOr<std::shared_ptr<const EnsemblePlan>> plan =
        EnsemblePlan::Create(config, RowLookup);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) return nullptr;
    return Ensemble::Create(*std::move(plan), 1, &clock_);
  }

  // A batch of `rows`: row r is {r, r + 0.5}.
  std::unique_ptr<InferRequest> Request(int64_t rows) {
    auto request = std::make_unique<InferRequest>();
    request->id = "r";
    request->cancel = std::make_shared<CancelFlag>();
    std::vector<float> in;
    for (int64_t r = 0; r < rows; ++r) {
      in.push_back(static_cast<float>(r));
      in.push_back(static_cast<float>(r) + 0.5f);
    }
    request->inputs.push_back(InferInput{"IN", RowFloats({rows, 2}, in), {}});
    request->on_complete = [this](absl::StatusOr<InferResponse> result) {
      ++answers_;
      result_ = std::move(result);
    };
    return request;
  }

  std::vector<float> Output(std::string_view name) const {
    const InferOutput* output = result_.ok() ? result_->FindOutput(name) : nullptr;
    return output == nullptr ? std::vector<float>{} : ValuesOf(output->tensor);
  }

  FakeClock clock_;
  RowsRunner runner_;
  int answers_ = 0;
  absl::StatusOr<InferResponse> result_ = absl::UnknownError("not answered");
};

TEST_F(EnsembleRowsTest, RowsPickingTwoBranchesRunEachOnItsRowsAndSelectRestoresTheirOrder) {
  auto ensemble = Make(kRows);
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(4), &runner_);
  runner_.Answer("router", Picks({0, 1, 0, 1}));
  ASSERT_EQ(runner_.held.size(), 2u);
  InferRequest* a = runner_.Find("a");
  InferRequest* b = runner_.Find("b");
  ASSERT_TRUE(a != nullptr && b != nullptr);
  EXPECT_EQ(ValuesOf(a->inputs[0].tensor), (std::vector<float>{0, 0.5f, 2, 2.5f}));  // rows 0, 2
  EXPECT_EQ(ValuesOf(b->inputs[0].tensor), (std::vector<float>{1, 1.5f, 3, 3.5f}));  // rows 1, 3
  runner_.Answer("a", Affine(1, 100));
  runner_.Answer("b", Affine(2, 0));
  // b's second step reads b's first answer as it is: the branch's own rows.
  ASSERT_EQ(runner_.held.size(), 1u);
  EXPECT_EQ(ValuesOf(runner_.held[0]->inputs[0].tensor), (std::vector<float>{2, 3, 6, 7}));
  EXPECT_EQ(answers_, 0);
  runner_.Answer("b", Affine(1, 1000));
  ASSERT_EQ(answers_, 1);
  ASSERT_TRUE(result_.ok()) << result_.status();
  // Per row: a: x + 100; b: 2x + 1000.
  EXPECT_EQ(Output("OUT"), (std::vector<float>{100, 100.5f, 1002, 1003, 102, 102.5f, 1006, 1007}));
  EXPECT_EQ(Output("BOTH"), (std::vector<float>{1, 0, 100, 100.5f, 0, 1, 1002, 1003,  //
                                                1, 0, 102, 102.5f, 0, 1, 1006, 1007}));
  bool named = false;
  for (const StepRecord& record : result_->steps) named |= record.branch == "a,b";
  EXPECT_TRUE(named) << "the switch's trace record names both branches";
  for (const Ensemble::BranchCount& count : ensemble->BranchCounts()) {
    EXPECT_EQ(count.matched, 1u) << count.branch;  // once per request, per branch taken
    EXPECT_EQ(count.by_default, 0u) << count.branch;
  }
}

TEST_F(EnsembleRowsTest, RowsThatAllPickOneBranchAreSentAsTheyCame) {
  auto ensemble = Make(kRows);
  ASSERT_NE(ensemble, nullptr);
  std::unique_ptr<InferRequest> request = Request(3);
  const std::byte* in = request->inputs[0].tensor.data();
  ensemble->Run(std::move(request), &runner_);
  runner_.Answer("router", Picks({0, 0, 0}));
  ASSERT_EQ(runner_.held.size(), 1u);
  EXPECT_EQ(runner_.held[0]->model_name, "a");
  EXPECT_EQ(runner_.held[0]->inputs[0].tensor.data(), in);  // no gather
  const std::byte* answer = nullptr;
  runner_.Answer("a", [&](const Tensor& x) {
    Tensor y = Affine(1, 100)(x);
    answer = y.data();
    return y;
  });
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(result_->FindOutput("OUT")->tensor.data(), answer);  // SELECT shares it
}

// Branch b holds a second switch on what its first step writes: its rows split again.
constexpr std::string_view kNested = R"pb(
  name: "nested"
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
      model_name: "router"
      input_map { key: "X" value: "IN" }
      output_map { key: "SCORES" value: "scores" }
    }
    step {
      switch {
        tensor: "scores"
        select: ARGMAX
        branch { name: "a" value: "0" step: "run_a" }
        branch { name: "b" value: "1" step: "run_b" step: "inner" }
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
      name: "inner"
      switch {
        tensor: "yb1"
        select: ARGMAX
        branch { name: "c" value: "0" step: "run_c" }
        branch { name: "d" value: "1" step: "run_d" }
      }
    }
    step {
      name: "run_c"
      model_name: "c"
      input_map { key: "X" value: "IN" }
      output_map { key: "Y" value: "yc" }
    }
    step {
      name: "run_d"
      model_name: "d"
      input_map { key: "X" value: "IN" }
      output_map { key: "Y" value: "yd" }
    }
    step {
      fusion {
        op: SELECT
        input: [ "yc", "yd" ]
        output: "yb"
      }
    }
    step {
      fusion {
        op: SELECT
        input: [ "ya", "yb" ]
        output: "OUT"
      }
    }
  }
)pb";

TEST_F(EnsembleRowsTest, ASwitchInsideASplitBranchSplitsItsRowsAgain) {
  auto ensemble = Make(kNested);
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(4), &runner_);
  runner_.Answer("router", Picks({0, 1, 1, 1}));
  ASSERT_NE(runner_.Find("b"), nullptr);
  EXPECT_EQ(ValuesOf(runner_.Find("b")->inputs[0].tensor),
            (std::vector<float>{1, 1.5f, 2, 2.5f, 3, 3.5f}));
  // b's rows 1, 2, 3 pick c, d, c in the inner switch.
  runner_.Answer("b", [](const Tensor&) { return RowFloats({3, 2}, {1, 0, 0, 1, 1, 0}); });
  ASSERT_TRUE(runner_.Find("c") != nullptr && runner_.Find("d") != nullptr);
  EXPECT_EQ(ValuesOf(runner_.Find("c")->inputs[0].tensor), (std::vector<float>{1, 1.5f, 3, 3.5f}));
  EXPECT_EQ(ValuesOf(runner_.Find("d")->inputs[0].tensor), (std::vector<float>{2, 2.5f}));
  runner_.Answer("d", Affine(1, 2000));
  runner_.Answer("c", Affine(1, 1000));
  EXPECT_EQ(answers_, 0);
  runner_.Answer("a", Affine(1, 100));
  ASSERT_EQ(answers_, 1);
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(Output("OUT"),
            (std::vector<float>{100, 100.5f, 1001, 1001.5f, 2002, 2002.5f, 1003, 1003.5f}));
}

TEST_F(EnsembleRowsTest, ABranchAnsweringAnotherNumberOfRowsFailsNamingTheOutput) {
  auto ensemble = Make(kRows);
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(3), &runner_);
  runner_.Answer("router", Picks({1, 0, 1}));
  runner_.Answer("a", [](const Tensor&) { return RowFloats({2, 2}, {0, 0, 0, 0}); });
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(result_.status().message()),
            "ensemble 'rows' step 3 (model 'a'): output 'Y' has shape [2,2], not one row for "
            "each of the 1 rows its branch runs on");
  // Branch b's step in flight finishes and is dropped: the request was answered once.
  runner_.Answer("b", Affine(1, 0));
  EXPECT_TRUE(runner_.held.empty());
  EXPECT_EQ(answers_, 1);
}

TEST_F(EnsembleRowsTest, MeanAcrossBranchesOfSplitRowsIsRefusedNamingTheStep) {
  auto ensemble =
      Make(Replace(kRows, kSelect, R"(fusion { op: MEAN input: [ "ya", "yb" ] output: "OUT" })"));
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(2), &runner_);
  runner_.Answer("router", Picks({0, 1}));
  runner_.Answer("a", Affine(1, 0));
  runner_.Answer("b", Affine(1, 0));
  runner_.Answer("b", Affine(1, 0));
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(result_.status().message()),
            "ensemble 'rows' step 6 (fusion 'join'): MEAN joins its inputs row by row, but the "
            "rows of this request went down different branches (tensor 'ya' holds 1 of the "
            "request's 2 rows); only SELECT joins rows of different branches");
}

TEST_F(EnsembleRowsTest, AFusionModelOverSplitRowsIsRefusedNamingTheInput) {
  auto ensemble = Make(Replace(kRows, kSelect, R"(model_name: "fuser" fusion { op: MODEL }
      input_map { key: "A" value: "ya" } input_map { key: "B" value: "yb" }
      output_map { key: "Y" value: "OUT" })"));
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(2), &runner_);
  runner_.Answer("router", Picks({1, 0}));
  runner_.Answer("a", Affine(1, 0));
  runner_.Answer("b", Affine(1, 0));
  runner_.Answer("b", Affine(1, 0));
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(result_.status().message()),
            "ensemble 'rows' step 6 (model 'fuser'): input 'A': tensor 'ya' holds 1 of the "
            "request's 2 rows");
  EXPECT_TRUE(runner_.held.empty());
}

TEST_F(EnsembleRowsTest, ARouterAnsweringAnotherNumberOfRowsIsRefused) {
  auto ensemble = Make(kRows);
  ASSERT_NE(ensemble, nullptr);
  ensemble->Run(Request(1), &runner_);
  runner_.Answer("router", Picks({0, 1}));
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(result_.status().message()),
            "ensemble 'rows' step 2 (switch 'pick'): tensor 'scores' has 2 rows, but the switch "
            "runs on 1 rows of the batch");
  EXPECT_TRUE(runner_.held.empty());
}

TEST_F(EnsembleRowsTest, ACancelledRequestSendsNoBranchOfItsSplitRows) {
  auto ensemble = Make(kRows);
  ASSERT_NE(ensemble, nullptr);
  std::unique_ptr<InferRequest> request = Request(2);
  std::shared_ptr<CancelFlag> cancel = request->cancel;
  ensemble->Run(std::move(request), &runner_);
  cancel->Cancel();
  runner_.Answer("router", Picks({0, 1}));
  EXPECT_TRUE(runner_.held.empty());
  ASSERT_EQ(answers_, 1);
  EXPECT_EQ(result_.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace brigade::route
