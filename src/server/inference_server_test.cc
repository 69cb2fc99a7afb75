#include "server/inference_server.h"

#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "testing/temp_repository.h"

namespace brigade {
namespace {

// Runs one request synchronously through the server.
absl::StatusOr<InferResponse> RunInfer(InferenceServer& server,
                                       std::unique_ptr<InferRequest> request) {
  absl::Notification done;
  absl::StatusOr<InferResponse> result = absl::UnknownError("no answer");
  request->on_complete = [&](absl::StatusOr<InferResponse> r) {
    result = std::move(r);
    done.Notify();
  };
  server.Infer(std::move(request));
  done.WaitForNotification();
  return result;
}

std::unique_ptr<InferRequest> AddSub(std::string model, int rows, int32_t a, int32_t b) {
  auto request = std::make_unique<InferRequest>();
  request->model_name = std::move(model);
  request->id = "req-1";
  std::vector<int32_t> x(static_cast<size_t>(rows) * 16, a), y(static_cast<size_t>(rows) * 16, b);
  request->inputs.push_back({"INPUT0", *Tensor::FromValues<int32_t>({rows, 16}, x), {}});
  request->inputs.push_back({"INPUT1", *Tensor::FromValues<int32_t>({rows, 16}, y), {}});
  return request;
}

class InferenceServerTest : public ::testing::Test {
 protected:
  std::unique_ptr<InferenceServer> Start(ModelControlMode mode = ModelControlMode::kNone) {
    InferenceServer::Options options;
    options.model_repository = repo_.path();
    options.control_mode = mode;
    options.pin_threads = false;
    auto server = InferenceServer::Create(options);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }
  testing::TempRepository repo_;
};

TEST_F(InferenceServerTest, InferReturnsTheModelsAnswerAndCountsIt) {
  repo_.AddModel("simple", testing::kAddSubConfig);
  auto server = Start();
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(server->IsReady());
  auto response = RunInfer(*server, AddSub("simple", 2, 7, 3));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->model_name, "simple");
  EXPECT_EQ(response->model_version, "1");
  EXPECT_EQ(response->id, "req-1");
  ASSERT_EQ(response->outputs.size(), 2u);
  EXPECT_EQ(response->outputs[0].tensor.values<int32_t>()[31], 10);
  EXPECT_EQ(response->outputs[1].tensor.values<int32_t>()[0], 4);
  EXPECT_GT(response->clock.at(Stage::kPreprocessed), 0);

  auto stats = server->Statistics("simple", -1);
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->size(), 1u);
  EXPECT_EQ((*stats)[0].inference_stats.success.count, 1u);
  EXPECT_EQ((*stats)[0].inference_count, 2u);
}

TEST_F(InferenceServerTest, BadRequestsFailWithoutHarmingOthers) {
  repo_.AddModel("simple", testing::kAddSubConfig);
  auto server = Start();
  auto unknown = RunInfer(*server, AddSub("nope", 1, 1, 1));
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  auto bad = AddSub("simple", 1, 1, 1);
  bad->inputs.pop_back();
  EXPECT_EQ(RunInfer(*server, std::move(bad)).status().code(), absl::StatusCode::kInvalidArgument);
  auto version = AddSub("simple", 1, 1, 1);
  version->model_version = 5;
  EXPECT_EQ(RunInfer(*server, std::move(version)).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(RunInfer(*server, AddSub("simple", 1, 1, 1)).ok());
  auto stats = server->Statistics("simple", 1);
  EXPECT_EQ((*stats)[0].inference_stats.fail.count, 1u);
  EXPECT_EQ((*stats)[0].inference_stats.success.count, 1u);
}

// add_sub whose inputs differ in type: every request passes validation and then fails in the
// backend's Execute (add_sub needs both inputs of one type). Its dims are variable, so its
// automatic warm-up (which fails alike) is only a guess and the model still loads.
constexpr char kMismatchedAddSubConfig[] = R"pb(
  backend: "brigade"
  max_batch_size: 0 input
  [ {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ -1 ]
  }
    , {
      name: "INPUT1"
      data_type: TYPE_INT32
      dims: [ -1 ]
    }] output
  [ {
    name: "OUTPUT0"
    data_type: TYPE_FP32
    dims: [ 4 ]
  }
    , {
      name: "OUTPUT1"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }]
  parameters {
    key: "op"
    value { string_value: "add_sub" }
  }
)pb";

uint64_t Failures(const protocol::ModelStatistics& stats, protocol::FailureReason reason) {
  return stats.fail_by_reason[static_cast<size_t>(reason)];
}

TEST_F(InferenceServerTest, FailuresAreCountedByTritonsReason) {
  using protocol::FailureReason;
  repo_.AddModel("simple", testing::kAddSubConfig);
  repo_.AddModel("mismatched", kMismatchedAddSubConfig);
  auto server = Start();
  ASSERT_NE(server, nullptr);
  // OTHER: fails validation (a missing input).
  auto invalid = AddSub("simple", 1, 1, 1);
  invalid->inputs.pop_back();
  EXPECT_EQ(RunInfer(*server, std::move(invalid)).status().code(),
            absl::StatusCode::kInvalidArgument);
  // REJECTED: its deadline passed before it could be queued.
  auto late = AddSub("simple", 1, 1, 1);
  late->deadline = Deadline::AtNs(1);
  EXPECT_EQ(RunInfer(*server, std::move(late)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  // CANCELED: the client went away before it ran.
  auto cancelled = AddSub("simple", 1, 1, 1);
  cancelled->cancel = std::make_shared<CancelFlag>();
  cancelled->cancel->Cancel();
  EXPECT_EQ(RunInfer(*server, std::move(cancelled)).status().code(), absl::StatusCode::kCancelled);
  // BACKEND: valid, and the model's Execute fails (with the same code validation uses).
  const std::vector<float> floats = {1, 2, 3, 4};
  const std::vector<int32_t> ints = {1, 2, 3, 4};
  auto mismatched = std::make_unique<InferRequest>();
  mismatched->model_name = "mismatched";
  mismatched->inputs.push_back({"INPUT0", *Tensor::FromValues<float>({4}, floats), {}});
  mismatched->inputs.push_back({"INPUT1", *Tensor::FromValues<int32_t>({4}, ints), {}});
  EXPECT_EQ(RunInfer(*server, std::move(mismatched)).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto simple = server->Statistics("simple", 1);
  ASSERT_TRUE(simple.ok()) << simple.status();
  EXPECT_EQ((*simple)[0].inference_stats.fail.count, 3u);
  EXPECT_EQ(Failures((*simple)[0], protocol::FailureReason::kOther), 1u);
  EXPECT_EQ(Failures((*simple)[0], protocol::FailureReason::kRejected), 1u);
  EXPECT_EQ(Failures((*simple)[0], protocol::FailureReason::kCanceled), 1u);
  EXPECT_EQ(Failures((*simple)[0], protocol::FailureReason::kBackend), 0u);
  auto broken = server->Statistics("mismatched", 1);
  ASSERT_TRUE(broken.ok()) << broken.status();
  EXPECT_EQ(Failures((*broken)[0], protocol::FailureReason::kBackend), 1u);
  EXPECT_EQ((*broken)[0].inference_stats.fail.count, 1u);
  EXPECT_NE(server->MetricsText().find("nv_inference_request_failure{model=\"mismatched\","
                                       "version=\"1\",reason=\"BACKEND\"} 1\n"),
            std::string::npos);
}

TEST_F(InferenceServerTest, MetadataDescribesTheModelAsClientsSeeIt) {
  repo_.AddModel("simple", testing::kAddSubConfig, {1, 2});
  auto server = Start();
  auto metadata = server->GetModelMetadata("simple", -1);
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->versions, (std::vector<std::string>{"2"}));
  EXPECT_EQ(metadata->platform, "brigade_builtin");
  ASSERT_EQ(metadata->inputs.size(), 2u);
  EXPECT_EQ(metadata->inputs[0].shape, (Shape{-1, 16}));
  EXPECT_EQ(metadata->outputs[1].name, "OUTPUT1");
  EXPECT_EQ(server->ModelReady("simple", 2).value_or(false), true);
  EXPECT_EQ(server->ModelReady("simple", 9).value_or(true), false);
  EXPECT_EQ(server->GetModelConfig("simple", -1)->max_batch_size(), 8);
  EXPECT_FALSE(server->Metadata().extensions.empty());
}

TEST_F(InferenceServerTest, ExplicitModeLoadsAndUnloadsThroughTheApi) {
  repo_.AddModel("simple", testing::kAddSubConfig);
  auto server = Start(ModelControlMode::kExplicit);
  EXPECT_EQ(server->ModelReady("simple", -1).value_or(true), false);
  auto index = server->RepositoryIndex(false);
  ASSERT_EQ(index->size(), 1u);
  EXPECT_EQ((*index)[0].state, "");
  ASSERT_TRUE(server->LoadModel({"simple", ""}).ok());
  EXPECT_TRUE(RunInfer(*server, AddSub("simple", 1, 1, 1)).ok());
  ASSERT_TRUE(server->UnloadModel("simple").ok());
  EXPECT_EQ(RunInfer(*server, AddSub("simple", 1, 1, 1)).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(server->RepositoryIndex(false)->at(0).state, "UNAVAILABLE");
}

TEST_F(InferenceServerTest, AFailingModelStopsStartUpWhenExitOnError) {
  repo_.AddModel("broken", "platform: \"nonexistent_platform\"");
  InferenceServer::Options options;
  options.model_repository = repo_.path();
  options.pin_threads = false;
  auto server = InferenceServer::Create(options);
  EXPECT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("nonexistent_platform"), std::string::npos);
  options.exit_on_error = false;
  EXPECT_TRUE(InferenceServer::Create(options).ok());
}

TEST_F(InferenceServerTest, DrainingRefusesNewWorkAndTurnsReadinessOff) {
  repo_.AddModel("simple", testing::kAddSubConfig);
  auto server = Start();
  server->StartDrain();
  EXPECT_FALSE(server->IsReady());
  EXPECT_TRUE(server->IsLive());
  EXPECT_EQ(RunInfer(*server, AddSub("simple", 1, 1, 1)).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(server->ModelReady("simple", -1).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(server->WaitIdle(absl::Seconds(1)));
}

// The drain delay: load balancers must see the server unready while it still serves.
TEST_F(InferenceServerTest, NotReadyStillServesUntilTheDrainStarts) {
  repo_.AddModel("simple", testing::kAddSubConfig);
  auto server = Start();
  server->MarkNotReady();
  EXPECT_FALSE(server->IsReady());
  EXPECT_TRUE(RunInfer(*server, AddSub("simple", 1, 1, 1)).ok());
  EXPECT_TRUE(server->WaitIdle(absl::Seconds(1)));
  EXPECT_EQ(server->InFlight(), 0);
  server->StartDrain();
  EXPECT_EQ(RunInfer(*server, AddSub("simple", 1, 1, 1)).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(InferenceServerTest, UnknownModelOrVersionIsNotReadyRatherThanAnError) {
  repo_.AddModel("simple", testing::kAddSubConfig, {1});
  auto server = Start();
  EXPECT_EQ(server->ModelReady("simple", 1).value_or(false), true);
  EXPECT_EQ(server->ModelReady("nope", -1).value_or(true), false);
  EXPECT_EQ(server->ModelReady("nope", 1).value_or(true), false);
  EXPECT_EQ(server->ModelReady("simple", 7).value_or(true), false);
}

std::string CachedAddSubConfig() {
  return std::string(testing::kAddSubConfig) + "\nresponse_cache { enable: true }\n";
}

// An answer is stored just after its client was answered, off the instance thread; WaitIdle
// returns once that store has landed too.
constexpr absl::Duration kIdleWait = absl::Seconds(5);

TEST_F(InferenceServerTest, ACachedModelAnswersRepeatsFromTheCacheUntilInvalidated) {
  repo_.AddModel("simple", CachedAddSubConfig());
  auto server = Start();
  ASSERT_NE(server, nullptr);
  auto first = RunInfer(*server, AddSub("simple", 1, 7, 3));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->execution.cache_hit);
  EXPECT_GT(first->execution.batch_size, 0);
  int misses = 1;
  ASSERT_TRUE(server->WaitIdle(kIdleWait));
  auto hit = RunInfer(*server, AddSub("simple", 1, 7, 3));
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_TRUE(hit->execution.cache_hit);
  EXPECT_EQ(hit->parameters.GetBool("cache_hit"), true);
  EXPECT_EQ(hit->execution.batch_size, 0);  // it never ran
  EXPECT_EQ(hit->outputs[0].tensor.values<int32_t>()[0], 10);
  // Different inputs are a different key.
  auto other = RunInfer(*server, AddSub("simple", 1, 7, 4));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->execution.cache_hit);
  EXPECT_EQ(other->outputs[0].tensor.values<int32_t>()[0], 11);
  ++misses;
  ASSERT_TRUE(server->WaitIdle(kIdleWait));  // that answer's store has landed

  ASSERT_TRUE(server->InvalidateCache("simple", -1, absl::Seconds(1)).ok());
  auto after = RunInfer(*server, AddSub("simple", 1, 7, 3));
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->execution.cache_hit);
  ++misses;

  auto stats = server->Statistics("simple", -1);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ((*stats)[0].inference_stats.cache_hit.count, 1u);
  EXPECT_EQ((*stats)[0].inference_stats.cache_miss.count, static_cast<uint64_t>(misses));
  EXPECT_EQ(server->InvalidateCache("", 2, absl::Milliseconds(1)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(InferenceServerTest, AModelWithoutCacheConfigNeverHits) {
  repo_.AddModel("simple", testing::kAddSubConfig);
  auto server = Start();
  ASSERT_NE(server, nullptr);
  for (int i = 0; i < 2; ++i) {
    auto response = RunInfer(*server, AddSub("simple", 1, 7, 3));
    ASSERT_TRUE(response.ok());
    EXPECT_FALSE(response->execution.cache_hit);
    EXPECT_FALSE(response->parameters.GetBool("cache_hit").has_value());
  }
}

TEST_F(InferenceServerTest, ABadResponseCacheSectionFailsTheModelsLoad) {
  repo_.AddModel("simple", std::string(testing::kAddSubConfig) +
                               "\nresponse_cache { enable: true ttl_ms: 99999999999 }\n");
  InferenceServer::Options options;
  options.model_repository = repo_.path();
  options.pin_threads = false;
  auto server = InferenceServer::Create(options);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("simple"), std::string::npos) << server.status();
}

TEST_F(InferenceServerTest, MetricsCountRequestsPerModelOnceReported) {
  repo_.AddModel("simple", testing::kAddSubConfig);
  auto server = Start();
  ASSERT_NE(server, nullptr);
  auto response = RunInfer(*server, AddSub("simple", 1, 7, 3));
  ASSERT_TRUE(response.ok());
  RequestObserver::Done done;
  done.model = response->model_name;
  done.version = response->model_version;
  done.protocol = Protocol::kHttp;
  done.clock = &response->clock;
  done.batch_size = response->execution.batch_size;
  server->observer()->OnRequestDone(done);
  const std::string text = server->MetricsText();
  EXPECT_NE(text.find("brigade_requests_total{model=\"simple\",version=\"1\",protocol=\"http\","
                      "outcome=\"success\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("brigade_requests_in_flight{model=\"simple\",version=\"1\"} 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("nv_inference_request_success"), std::string::npos);
}

}  // namespace
}  // namespace brigade
