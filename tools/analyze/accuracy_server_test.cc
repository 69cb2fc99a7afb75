// PredictClasses through Brigade's real HTTP front end (binary tensors), in-process on a loopback
// port: an identity model on the builtin backend answers each example with itself, so the top-1
// class of an example is the index of its largest value, which the test knows.

#include <memory>
#include <string>
#include <vector>

#include "core/strings.h"
#include "frontend/http/http_server.h"
#include "frontend/http/kserve_http_handler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/inference_server.h"
#include "testing/temp_repository.h"
#include "tools/analyze/accuracy.h"
#include "tools/analyze/eval_set.h"
#include "tools/client/client.h"

namespace brigade::analyze {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kScoresConfig[] = R"pb(
  name: "scores"
  backend: "brigade"
  max_batch_size: 4
  input { name: "INPUT0" data_type: TYPE_FP32 dims: 3 }
  output { name: "OUTPUT0" data_type: TYPE_FP32 dims: 3 }
  parameters {
    key: "op"
    value { string_value: "identity" }
  }
)pb";

class AccuracyServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repository_.AddModel("scores", kScoresConfig);
    InferenceServer::Options options;
    options.model_repository = repository_.path();
    options.pin_threads = false;
    absl::StatusOr<std::unique_ptr<InferenceServer>> server = InferenceServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    absl::StatusOr<std::unique_ptr<frontend::KServeHttpHandler>> handler =
        frontend::KServeHttpHandler::Create(server_.get(), {});
    ASSERT_TRUE(handler.ok()) << handler.status();
    handler_ = *std::move(handler);
    frontend::HttpServer::Options http_options;
    http_options.address = "127.0.0.1";
    http_options.port = 0;
    absl::StatusOr<std::unique_ptr<frontend::HttpServer>> http =
        frontend::HttpServer::Create(http_options, handler_.get());
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
    absl::StatusOr<std::unique_ptr<client::Client>> client =
        client::Client::Create({.address = StrCat("127.0.0.1:", http_->port())});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    absl::StatusOr<protocol::ModelMetadata> metadata = client_->GetModelMetadata("scores", "");
    ASSERT_TRUE(metadata.ok()) << metadata.status();
    metadata_ = *std::move(metadata);
  }
  void TearDown() override {
    if (http_ != nullptr) http_->Shutdown(absl::ZeroDuration());
  }

  // Seven UINT8 examples of three values; the largest sits at index `winners[i]`.
  static EvalSet Examples(const std::vector<int>& winners) {
    std::vector<uint8_t> values;
    for (int winner : winners) {
      for (int c = 0; c < 3; ++c) values.push_back(c == winner ? 200 : 10 + c);
    }
    EvalSet set;
    set.inputs = *Tensor::FromValues<uint8_t>({static_cast<int64_t>(winners.size()), 3}, values);
    return set;
  }

  testing::TempRepository repository_;
  std::unique_ptr<InferenceServer> server_;
  std::unique_ptr<frontend::KServeHttpHandler> handler_;
  std::unique_ptr<frontend::HttpServer> http_;
  std::unique_ptr<client::Client> client_;
  protocol::ModelMetadata metadata_;
};

TEST_F(AccuracyServerTest, PredictsEveryExampleInBatchesAndScoresAgainstLabels) {
  const EvalSet set = Examples({2, 0, 1, 1, 2, 0, 2});
  PredictOptions options{.model = "scores", .output = "", .batch_rows = 3, .scale = 1.0 / 255};
  absl::StatusOr<std::vector<int32_t>> predictions =
      PredictClasses(*client_, metadata_, set, options);
  ASSERT_TRUE(predictions.ok()) << predictions.status();
  EXPECT_THAT(*predictions, ElementsAre(2, 0, 1, 1, 2, 0, 2));

  const std::vector<int64_t> labels = {2, 0, 1, 0, 2, 1, 2};
  absl::StatusOr<Score> score = ScorePredictions(*predictions, labels);
  ASSERT_TRUE(score.ok());
  EXPECT_EQ(score->correct, 5);
  EXPECT_NEAR(score->accuracy, 5.0 / 7, 1e-12);
}

TEST_F(AccuracyServerTest, BatchLargerThanTheModelsMaxIsRefusedByTheServer) {
  const EvalSet set = Examples({0, 1, 2, 0, 1, 2});
  PredictOptions options{.model = "scores", .output = "OUTPUT0", .batch_rows = 6, .scale = 1};
  absl::StatusOr<std::vector<int32_t>> predictions =
      PredictClasses(*client_, metadata_, set, options);
  ASSERT_FALSE(predictions.ok());
  EXPECT_EQ(predictions.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(AccuracyServerTest, UnknownOutputIsNamed) {
  const EvalSet set = Examples({0});
  PredictOptions options{.model = "scores", .output = "PROBS", .batch_rows = 1, .scale = 1};
  absl::StatusOr<std::vector<int32_t>> predictions =
      PredictClasses(*client_, metadata_, set, options);
  ASSERT_FALSE(predictions.ok());
  EXPECT_THAT(predictions.status().message(), HasSubstr("PROBS"));
}

}  // namespace
}  // namespace brigade::analyze
