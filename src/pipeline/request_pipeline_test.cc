#include "pipeline/request_pipeline.h"

#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "cache/cache_manager.h"
#include "engine/builtin/builtin_backend.h"
#include "engine/process/process_backend.h"
#include "gtest/gtest.h"
#include "repository/model_repository.h"
#include "testing/temp_repository.h"

namespace brigade::pipeline {
namespace {

constexpr absl::Duration kWait = absl::Seconds(5);

// Copied from strings, not assigned from literals: g++ 12 at -O3 raises a false -Wrestrict on
// assigning short literals to a std::string member (GCC bug 105329).
std::unique_ptr<InferRequest> AddSub(int32_t a, int32_t b, std::string model = "simple") {
  auto request = std::make_unique<InferRequest>();
  request->model_name = std::move(model);
  request->id = request->model_name;
  request->inputs.push_back(
      {"INPUT0", *Tensor::FromValues<int32_t>({1, 16}, std::vector<int32_t>(16, a)), {}});
  request->inputs.push_back(
      {"INPUT1", *Tensor::FromValues<int32_t>({1, 16}, std::vector<int32_t>(16, b)), {}});
  return request;
}

class RequestPipelineTest : public ::testing::Test {
 protected:
  // A repository holding Triton's "simple" model, with a response cache when `cached`.
  void Start(bool cached, std::vector<std::pair<std::string, std::string>> more = {}) {
    repo_dir_.AddModel("simple", std::string(testing::kAddSubConfig) +
                                     (cached ? "\nresponse_cache { enable: true }\n" : ""));
    for (const auto& [name, config] : more) repo_dir_.AddModel(name, config);
    backends_.Register(std::make_unique<engine::BuiltinBackend>());
    backends_.Register(std::make_unique<engine::ProcessBackend>());
    caches_ = *cache::CacheManager::Create({});
    repository::ModelRepository::Options options;
    options.root = repo_dir_.path();
    options.backends = &backends_;
    options.pin_threads = false;
    options.caches = caches_.get();
    std::vector<absl::Status> errors;
    repository_ = *repository::ModelRepository::Create(options, &errors);
    ASSERT_TRUE(errors.empty()) << errors[0];
    pipeline_ = *RequestPipeline::Create({repository_.get(), Clock::Real()});
  }

  // The last answers' threads may still be leaving Answer() after their clients got the answer:
  // the pipeline is destroyed only once it is idle, as its contract asks (ThreadSanitizer saw
  // Admission::Leave race the destructor in a test that did not wait).
  void TearDown() override {
    if (pipeline_ != nullptr) {
      EXPECT_TRUE(pipeline_->WaitIdle(kWait));
    }
  }

  // Runs one request; `on_answer` runs inside the front end's callback, before it returns.
  absl::StatusOr<InferResponse> Run(std::unique_ptr<InferRequest> request,
                                    std::function<void()> on_answer = nullptr) {
    absl::Notification done;
    absl::StatusOr<InferResponse> result = absl::UnknownError("no answer");
    request->on_complete = [&](absl::StatusOr<InferResponse> answer) {
      result = std::move(answer);
      if (on_answer) on_answer();
      done.Notify();
    };
    pipeline_->Infer(std::move(request));
    done.WaitForNotification();
    return result;
  }

  protocol::ModelStatistics Stats() const {
    return (*repository_->Get("simple", -1))->stats().Snapshot();
  }

  testing::TempRepository repo_dir_;
  engine::BackendRegistry backends_;
  std::unique_ptr<cache::CacheManager> caches_;
  std::unique_ptr<repository::ModelRepository> repository_;
  std::unique_ptr<RequestPipeline> pipeline_;
};

TEST_F(RequestPipelineTest, AClientAnsweredSeesItsRequestInTheStatisticsAlready) {
  Start(/*cached=*/false);
  uint64_t counted_at_answer = 0;
  auto answer =
      Run(AddSub(7, 3), [&] { counted_at_answer = Stats().inference_stats.success.count; });
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->outputs[0].tensor.values<int32_t>()[0], 10);
  EXPECT_EQ(counted_at_answer, 1u);
  EXPECT_TRUE(pipeline_->WaitIdle(kWait));
}

TEST_F(RequestPipelineTest, TheCacheStoreHasLandedWhenThePipelineIsIdle) {
  Start(/*cached=*/true);
  auto miss = Run(AddSub(7, 3));
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_FALSE(miss->execution.cache_hit);
  ASSERT_TRUE(pipeline_->WaitIdle(kWait));
  auto hit = Run(AddSub(7, 3));
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_TRUE(hit->execution.cache_hit) << "the store of the first answer came before idle";
  EXPECT_EQ(hit->outputs[0].tensor.values<int32_t>()[0], 10);
  EXPECT_EQ(Stats().inference_stats.cache_hit.count, 1u);
  EXPECT_EQ(Stats().inference_stats.cache_miss.count, 1u);
}

TEST_F(RequestPipelineTest, EachStageAnswersWhatItStopsNamingTheCulprit) {
  Start(/*cached=*/false);
  EXPECT_EQ(Run(AddSub(1, 1, "nope")).status().code(), absl::StatusCode::kNotFound);  // route
  auto malformed = AddSub(1, 1);
  malformed->inputs.pop_back();
  const absl::Status invalid = Run(std::move(malformed)).status();  // preprocess
  EXPECT_EQ(invalid.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(invalid.message()).find("INPUT1"), std::string::npos) << invalid;
  EXPECT_EQ(Stats().fail_by_reason[static_cast<size_t>(protocol::FailureReason::kOther)], 1u);
  pipeline_->StartDrain();  // admit
  EXPECT_EQ(Run(AddSub(1, 1)).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(pipeline_->WaitIdle(kWait));
}

// simple(a, b) -> (a + b, a - b), then simple(a + b, a - b) -> (2a, 2b).
constexpr char kTwice[] = R"pb(
  name: "twice"
  platform: "ensemble"
  max_batch_size: 8
  input {
    name: "A"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
  input {
    name: "B"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
  output {
    name: "TWO_A"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
  output {
    name: "TWO_B"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
  ensemble_scheduling {
    step {
      model_name: "simple"
      input_map { key: "INPUT0" value: "A" }
      input_map { key: "INPUT1" value: "B" }
      output_map { key: "OUTPUT0" value: "sum" }
      output_map { key: "OUTPUT1" value: "diff" }
    }
    step {
      model_name: "simple"
      input_map { key: "INPUT0" value: "sum" }
      input_map { key: "INPUT1" value: "diff" }
      output_map { key: "OUTPUT0" value: "TWO_A" }
      output_map { key: "OUTPUT1" value: "TWO_B" }
    }
  })pb";

TEST_F(RequestPipelineTest, AnEnsembleRunsEachStepThroughItsModelAndAnswersAsItself) {
  Start(/*cached=*/false, {{"twice", kTwice}});
  std::unique_ptr<InferRequest> request = AddSub(7, 3, "twice");
  request->inputs[0].name = "A";
  request->inputs[1].name = "B";
  auto answer = Run(std::move(request));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->model_name, "twice");
  EXPECT_EQ(answer->model_version, "1");
  ASSERT_EQ(answer->outputs.size(), 2u);
  EXPECT_EQ(answer->outputs[0].name, "TWO_A");
  EXPECT_EQ(answer->outputs[0].tensor.values<int32_t>()[0], 14);
  EXPECT_EQ(answer->outputs[1].tensor.values<int32_t>()[15], 6);
  EXPECT_TRUE(pipeline_->WaitIdle(kWait));
  // Two requests of "simple" (one per step), one of the ensemble.
  EXPECT_EQ(Stats().inference_stats.success.count, 2u);
  EXPECT_EQ((*repository_->Get("twice", -1))->stats().Snapshot().inference_stats.success.count, 1u);
}

TEST_F(RequestPipelineTest, AStepsBadInputFailsTheEnsembleNamingTheStep) {
  Start(/*cached=*/false, {{"twice", kTwice}});
  std::unique_ptr<InferRequest> request = AddSub(7, 3, "twice");
  request->inputs[0].name = "A";
  request->inputs[1].name = "C";
  auto answer = Run(std::move(request));
  // The ensemble's own inputs are checked first, like any model's.
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(answer.status().message().find("'twice'"), std::string::npos) << answer.status();
  EXPECT_TRUE(pipeline_->WaitIdle(kWait));
}

TEST_F(RequestPipelineTest, ARouterAnswersAsItselfAndSaysWhichVariantServed) {
  std::string copy(testing::kAddSubConfig);
  Start(/*cached=*/false,
        {{"simple_copy", copy},
         {"router", R"pb(name: "router"
                         platform: "brigade_router"
                         routing {
                           variant { model_name: "simple" }
                           variant { model_name: "simple_copy" }
                           rule { parameter: "urgent" value: "true" variant: "simple_copy" }
                         })pb"}});
  std::unique_ptr<InferRequest> urgent = AddSub(7, 3, "router");
  urgent->parameters.Set("urgent", true);
  auto answer = Run(std::move(urgent));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->model_name, "router");
  EXPECT_EQ(answer->parameters.GetString("routed_to"), "simple_copy:1");
  EXPECT_EQ(answer->outputs[0].tensor.values<int32_t>()[0], 10);
  answer = Run(AddSub(7, 3, "router"));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->parameters.GetString("routed_to"), "simple:1");
  EXPECT_TRUE(pipeline_->WaitIdle(kWait));
  EXPECT_EQ(Stats().inference_stats.success.count, 1u);
  EXPECT_EQ((*repository_->Get("router", -1))->stats().Snapshot().inference_stats.success.count,
            2u);
}

TEST_F(RequestPipelineTest, ClassifiedOutputsAreTopKStringsWithLabelsOnMissesAndHits) {
  std::string labels;
  for (int i = 0; i < 15; ++i) labels += "class" + std::to_string(i) + "\n";  // none for 15
  repo_dir_.WriteFile("labeled/labels.txt", labels);
  std::string config = std::string(testing::kAddSubConfig) + "\nresponse_cache { enable: true }\n";
  const std::string dims = "name: \"OUTPUT0\"";
  config.replace(config.find(dims), dims.size(), dims + " label_filename: \"labels.txt\"");
  Start(/*cached=*/false, {{"labeled", config}});
  auto request = [](ParameterValue count) {
    auto r = std::make_unique<InferRequest>();
    r->model_name = "labeled";
    std::vector<int32_t> ramp(16);
    for (int i = 0; i < 16; ++i) ramp[i] = i;
    r->inputs.push_back({"INPUT0", *Tensor::FromValues<int32_t>({1, 16}, ramp), {}});
    r->inputs.push_back(
        {"INPUT1", *Tensor::FromValues<int32_t>({1, 16}, std::vector<int32_t>(16, 0)), {}});
    RequestedOutput output{"OUTPUT0", {}, false};
    output.parameters.Set("classification", std::move(count));
    r->outputs.push_back(std::move(output));
    return r;
  };
  for (const bool hit : {false, true}) {
    absl::StatusOr<InferResponse> answer = Run(request(int64_t{2}));
    ASSERT_TRUE(answer.ok()) << answer.status();
    const InferOutput* output = answer->FindOutput("OUTPUT0");
    ASSERT_NE(output, nullptr);
    EXPECT_EQ(output->tensor.shape(), (Shape{1, 2})) << hit;
    const std::vector<std::string_view> want = {"15:15", "14:14:class14"};
    EXPECT_EQ(*output->tensor.StringValues(), want) << hit;
    EXPECT_EQ(answer->execution.cache_hit, hit);
    ASSERT_TRUE(pipeline_->WaitIdle(kWait));  // the miss's store has landed
  }
  absl::StatusOr<InferResponse> bad = Run(request(std::string("3")));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("output 'OUTPUT0': parameter classification must be a "
                                        "positive integer"),
            std::string_view::npos)
      << bad.status();
}

TEST_F(RequestPipelineTest, AttachedStepsRunAroundTheModelFromManyThreadsAtOnce) {
  // identity with a softmax attached before it and a top-1 after: the answer is the argmax of
  // the input and its softmax probability.
  const std::string config = std::string(testing::kIdentityConfig) + R"pb(
    preprocess {
      parameters { key: "step" value: "softmax" }
      input {
        name: "LOGITS"
        data_type: TYPE_FP32
        dims: [ -1 ]
      }
    }
    postprocess {
      parameters { key: "step" value: "top_k" }
      output {
        name: "P"
        data_type: TYPE_FP32
        dims: [ 1 ]
      }
      output {
        name: "CLASS"
        data_type: TYPE_INT64
        dims: [ 1 ]
      }
    })pb";
  Start(/*cached=*/false, {{"attached", config}});
  constexpr int kThreads = 4;
  constexpr int kRequests = 25;
  std::vector<std::thread> clients;
  std::atomic<int> right{0};
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < kRequests; ++i) {
        const int hot = (t + i) % 4;
        std::vector<float> logits(4, 0.0f);
        logits[hot] = 2.0f;
        auto request = std::make_unique<InferRequest>();
        request->model_name = "attached";
        request->inputs.push_back({"LOGITS", *Tensor::FromValues<float>({1, 4}, logits), {}});
        absl::StatusOr<InferResponse> answer = Run(std::move(request));
        if (!answer.ok()) continue;
        const InferOutput* classes = answer->FindOutput("CLASS");
        const InferOutput* p = answer->FindOutput("P");
        if (classes == nullptr || p == nullptr || answer->FindOutput("OUTPUT0") != nullptr)
          continue;
        const float want = std::exp(2.0f) / (std::exp(2.0f) + 3.0f);
        if (classes->tensor.values<int64_t>()[0] == hot &&
            std::abs(p->tensor.values<float>()[0] - want) < 1e-6f) {
          ++right;
        }
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(right.load(), kThreads * kRequests);

  // A request naming the model's own input, not the step's, is refused by name.
  auto wrong = std::make_unique<InferRequest>();
  wrong->model_name = "attached";
  const std::vector<float> zeros(4, 0.0f);
  wrong->inputs.push_back({"INPUT0", *Tensor::FromValues<float>({1, 4}, zeros), {}});
  absl::StatusOr<InferResponse> refused = Run(std::move(wrong));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
}

}  // namespace
}  // namespace brigade::pipeline
