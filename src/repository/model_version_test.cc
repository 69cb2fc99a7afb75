#include "repository/model_version.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "engine/builtin/builtin_backend.h"
#include "gtest/gtest.h"
#include "protocol/model_config_parser.h"
#include "testing/temp_repository.h"
#ifdef BRIGADE_HAVE_ONNX
#include "engine/onnx/onnx_backend.h"
#include "engine/onnx/test_util/onnx_builder.h"
#endif

namespace brigade::repository {
namespace {

namespace fs = std::filesystem;

// A non-batching identity model that keeps its one instance busy for 300 ms per request, with a
// bounded, timed second priority level.
constexpr char kQueuePolicyConfig[] = R"pb(
  backend: "brigade"
  max_batch_size: 0 input
  [ {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ 4 ]
  }] output
  [ {
    name: "OUTPUT0"
    data_type: TYPE_FP32
    dims: [ 4 ]
  }]
  parameters {
    key: "op"
    value { string_value: "identity" }
  }
  parameters {
    key: "compute_us"
    value { string_value: "300000" }
  }
  dynamic_batching {
    priority_levels: 2
    default_priority_level: 2
    priority_queue_policy {
      key: 2
      value { max_queue_size: 1 default_timeout_microseconds: 20000 }
    }
  }
)pb";

class Answers {
 public:
  InferCallback Callback(const std::string& id) {
    return [this, id](absl::StatusOr<InferResponse> result) {
      absl::MutexLock lock(&mu_);
      results_.emplace(id, std::move(result));
      order_.push_back(id);
    };
  }
  void WaitFor(size_t count) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, count]()
                      ABSL_SHARED_LOCKS_REQUIRED(mu_) { return order_.size() >= count; };
    mu_.Await(absl::Condition(&enough));
  }
  absl::StatusCode code(const std::string& id) {
    absl::MutexLock lock(&mu_);
    auto it = results_.find(id);
    return it == results_.end() ? absl::StatusCode::kUnknown : it->second.status().code();
  }
  std::vector<std::string> order() {
    absl::MutexLock lock(&mu_);
    return order_;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, absl::StatusOr<InferResponse>> results_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> order_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<InferRequest> Request(uint32_t priority, InferCallback callback) {
  auto request = std::make_unique<InferRequest>();
  request->priority = priority;
  request->inputs.push_back({"INPUT0", *Tensor::Zeros(DataType::kFp32, {4}), {}});
  request->on_complete = std::move(callback);
  return request;
}

TEST(ModelVersionTest, TheConfigsQueuePoliciesBoundAndTimeTheQueue) {
  const fs::path dir = fs::temp_directory_path() / "brigade_model_version_test";
  fs::remove_all(dir);
  fs::create_directories(dir / "1");
  auto parsed = protocol::ParseModelConfigText(kQueuePolicyConfig, "config.pbtxt");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(protocol::ValidateModelConfig("slow", &parsed->config).ok());
  engine::BackendRegistry backends;
  backends.Register(std::make_unique<engine::BuiltinBackend>());
  ModelVersion::Options options;
  options.model_dir = dir.string();
  options.config = parsed->config;
  options.backends = &backends;
  options.pin_threads = false;
  auto version = ModelVersion::Load(options);
  ASSERT_TRUE(version.ok()) << version.status();

  Answers answers;
  (*version)->Enqueue(Request(1, answers.Callback("running")));  // level 1: unbounded
  (*version)->Enqueue(Request(0, answers.Callback("queued")));   // default level 2
  (*version)->Enqueue(Request(2, answers.Callback("refused")));  // level 2 holds one
  EXPECT_EQ(answers.code("refused"), absl::StatusCode::kUnavailable);
  answers.WaitFor(3);
  // The queued request timed out (20 ms) while the instance was still busy (300 ms).
  EXPECT_EQ(answers.order(), (std::vector<std::string>{"refused", "queued", "running"}));
  EXPECT_EQ(answers.code("queued"), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(answers.code("running"), absl::StatusCode::kOk);
  (*version)->Drain();
  fs::remove_all(dir);
}

#ifdef BRIGADE_HAVE_ONNX
// Loads add_bias (y = x + bias, `bias` optional with the initializer as its default) with a
// required warm-up of `x_dims`-shaped zeros for x alone.
absl::StatusOr<std::shared_ptr<ModelVersion>> LoadAddBiasWarmedUpWithout(
    const std::string& x_dims, engine::BackendRegistry* backends, testing::TempRepository* repo) {
  repo->AddModel("add_bias", testing::kAddBiasConfig);
  repo->WriteFile("add_bias/1/model.onnx", engine::onnx::AddBiasGraph().Serialize());
  const std::string text = std::string(testing::kAddBiasConfig) +
                           " model_warmup { name: \"no_bias\" batch_size: 2 inputs { key: \"x\" "
                           "value { data_type: TYPE_FP32 dims: [ " +
                           x_dims + " ] zero_data: true } } }";
  auto parsed = protocol::ParseModelConfigText(text, "config.pbtxt");
  if (!parsed.ok()) return parsed.status();
  if (absl::Status valid = protocol::ValidateModelConfig("add_bias", &parsed->config);
      !valid.ok()) {
    return valid;
  }
  ModelVersion::Options options;
  options.model_dir = (fs::path(repo->path()) / "add_bias").string();
  options.config = parsed->config;
  options.backends = backends;
  options.pin_threads = false;
  return ModelVersion::Load(options);
}

TEST(ModelVersionTest, AWarmupThatOmitsAnOptionalInputRunsTheModelWithItsDefault) {
  engine::BackendRegistry backends;
  backends.Register(std::make_unique<engine::OnnxBackend>());
  testing::TempRepository repo;
  auto version = LoadAddBiasWarmedUpWithout("4", &backends, &repo);
  ASSERT_TRUE(version.ok()) << version.status();
  (*version)->Drain();
  // The warm-up runs and is required: x of the wrong shape fails the load.
  auto wrong = LoadAddBiasWarmedUpWithout("5", &backends, &repo);
  EXPECT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("warm-up 'no_bias' failed"), std::string_view::npos)
      << wrong.status();
  EXPECT_NE(wrong.status().message().find("input 'x'"), std::string_view::npos) << wrong.status();
}
#endif  // BRIGADE_HAVE_ONNX

}  // namespace
}  // namespace brigade::repository
