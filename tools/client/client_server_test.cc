// The client against Brigade's real front ends in-process: an InferenceServer with the builtin
// backend behind HttpServer + KServeHttpHandler and GrpcServer on loopback ports, exercised
// through every call of the client over HTTP JSON, HTTP binary and gRPC alike.

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/strings.h"
#include "frontend/grpc/grpc_server.h"
#include "frontend/http/http_server.h"
#include "frontend/http/kserve_http_handler.h"
#include "gtest/gtest.h"
#include "server/inference_server.h"
#include "testing/temp_repository.h"
#include "tools/client/client.h"
#include "tools/client/client_status.h"

namespace brigade::client {
namespace {

enum class Wire { kHttpJson, kHttpBinary, kGrpc };

std::string WireName(const ::testing::TestParamInfo<Wire>& info) {
  switch (info.param) {
    case Wire::kHttpJson:
      return "HttpJson";
    case Wire::kHttpBinary:
      return "HttpBinary";
    case Wire::kGrpc:
      return "Grpc";
  }
  return "?";
}

// The value of `result`; a fixture that cannot start has nothing to test.
template <typename T>
T Started(absl::StatusOr<T> result, std::string_view what) {
  if (!result.ok()) {
    fmt::print(stderr, "cannot start {}: {}\n", what, result.status().message());
    std::abort();
  }
  return *std::move(result);
}

// One server for the whole suite: starting the front ends is the slow part.
class Servers {
 public:
  Servers() {
    repository_.AddModel("simple", testing::kAddSubConfig);
    repository_.AddModel("identity", testing::kIdentityConfig);
    InferenceServer::Options options;
    options.model_repository = repository_.path();
    options.control_mode = ModelControlMode::kExplicit;
    options.startup_models = {"*"};
    options.pin_threads = false;
    server_ = Started(InferenceServer::Create(options), "the inference server");
    handler_ = Started(frontend::KServeHttpHandler::Create(server_.get(), {}), "the HTTP handler");
    frontend::HttpServer::Options http_options;
    http_options.address = "127.0.0.1";
    http_options.port = 0;
    http_ = Started(frontend::HttpServer::Create(http_options, handler_.get()), "HTTP");
    frontend::GrpcServer::Options grpc_options;
    grpc_options.host = "127.0.0.1";
    grpc_options.port = 0;
    grpc_ = Started(frontend::GrpcServer::Create(server_.get(), grpc_options), "gRPC");
  }
  ~Servers() {
    grpc_->Shutdown(absl::ZeroDuration());
    http_->Shutdown(absl::ZeroDuration());
  }

  int http_port() const { return http_->port(); }
  int grpc_port() const { return grpc_->port(); }

 private:
  testing::TempRepository repository_;
  std::unique_ptr<InferenceServer> server_;
  std::unique_ptr<frontend::KServeHttpHandler> handler_;
  std::unique_ptr<frontend::HttpServer> http_;
  std::unique_ptr<frontend::GrpcServer> grpc_;
};

class ClientServerTest : public ::testing::TestWithParam<Wire> {
 protected:
  static void SetUpTestSuite() { servers_ = std::make_unique<Servers>(); }
  static void TearDownTestSuite() { servers_.reset(); }

  void SetUp() override {
    ClientOptions options;
    if (GetParam() == Wire::kGrpc) {
      options.protocol = ClientProtocol::kGrpc;
      options.address = StrCat("127.0.0.1:", servers_->grpc_port());
    } else {
      options.address = StrCat("127.0.0.1:", servers_->http_port());
    }
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  bool binary() const { return GetParam() == Wire::kHttpBinary; }

  // Triton's "simple" request: INPUT0 = 7s, INPUT1 = 3s, one row of 16.
  InferSpec AddSub() const {
    const std::vector<int32_t> sevens(16, 7);
    const std::vector<int32_t> threes(16, 3);
    InferSpec spec;
    spec.model_name = "simple";
    spec.id = "req-1";
    spec.inputs.push_back({.name = "INPUT0",
                           .tensor = *Tensor::FromValues<int32_t>({1, 16}, sevens),
                           .parameters = {}});
    spec.inputs.push_back({.name = "INPUT1",
                           .tensor = *Tensor::FromValues<int32_t>({1, 16}, threes),
                           .parameters = {}});
    spec.binary_inputs = binary();
    spec.binary_outputs = binary();
    return spec;
  }

  // The server's own status for `status`, whichever protocol carried it.
  std::optional<int> ProtocolStatus(const absl::Status& status) const {
    return GetParam() == Wire::kGrpc ? GrpcCodeOf(status) : HttpStatusOf(status);
  }

  static std::unique_ptr<Servers> servers_;
  std::unique_ptr<Client> client_;
};

std::unique_ptr<Servers> ClientServerTest::servers_;

TEST_P(ClientServerTest, HealthAndServerMetadata) {
  EXPECT_EQ(client_->ServerLive().value_or(false), true);
  EXPECT_EQ(client_->ServerReady().value_or(false), true);
  absl::StatusOr<protocol::ServerMetadata> metadata = client_->GetServerMetadata();
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  EXPECT_FALSE(metadata->name.empty());
  EXPECT_FALSE(metadata->version.empty());
}

TEST_P(ClientServerTest, ModelMetadataAndReadiness) {
  absl::StatusOr<protocol::ModelMetadata> metadata = client_->GetModelMetadata("simple", "");
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  EXPECT_EQ(metadata->name, "simple");
  EXPECT_EQ(metadata->versions, (std::vector<std::string>{"1"}));
  ASSERT_EQ(metadata->inputs.size(), 2u);
  EXPECT_EQ(metadata->inputs[0].name, "INPUT0");
  EXPECT_EQ(metadata->inputs[0].dtype, DataType::kInt32);
  EXPECT_EQ(metadata->inputs[0].shape, (Shape{-1, 16}));
  EXPECT_EQ(client_->ModelReady("simple", "").value_or(false), true);
  EXPECT_EQ(client_->ModelReady("simple", "1").value_or(false), true);
}

TEST_P(ClientServerTest, ModelConfigDecodesOnEveryWire) {
  absl::StatusOr<config::ModelConfig> config = client_->GetModelConfig("simple", "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name(), "simple");
  EXPECT_EQ(config->max_batch_size(), 8);
  ASSERT_EQ(config->input_size(), 2);
  EXPECT_EQ(config->input(0).name(), "INPUT0");
  EXPECT_EQ(config->input(0).data_type(), config::TYPE_INT32);
  EXPECT_EQ(config->input(0).dims(0), 16);
  EXPECT_EQ(client_->GetModelConfig("no_such_model", "").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_P(ClientServerTest, UnknownModelIsNotFoundWithTheServersStatus) {
  absl::Status status = client_->GetModelMetadata("no_such_model", "").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_NE(status.message().find("no_such_model"), std::string::npos) << status;
  EXPECT_EQ(ProtocolStatus(status), GetParam() == Wire::kGrpc ? 5 : 404);
}

TEST_P(ClientServerTest, InferComputesAddSubAndEchoesTheId) {
  InferResponse response;
  absl::Status status = client_->Infer(AddSub(), &response);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(response.model_name, "simple");
  EXPECT_EQ(response.model_version, "1");
  EXPECT_EQ(response.id, "req-1");
  ASSERT_EQ(response.outputs.size(), 2u);
  const InferOutput* sum = response.FindOutput("OUTPUT0");
  const InferOutput* difference = response.FindOutput("OUTPUT1");
  ASSERT_NE(sum, nullptr);
  ASSERT_NE(difference, nullptr);
  EXPECT_EQ(sum->tensor.shape(), (Shape{1, 16}));
  for (int32_t v : sum->tensor.values<int32_t>()) EXPECT_EQ(v, 10);
  for (int32_t v : difference->tensor.values<int32_t>()) EXPECT_EQ(v, 4);
}

TEST_P(ClientServerTest, InferReturnsOnlyTheRequestedOutputs) {
  InferSpec spec = AddSub();
  spec.outputs.push_back({.name = "OUTPUT1", .parameters = {}, .binary = binary()});
  InferResponse response;
  ASSERT_TRUE(client_->Infer(spec, &response).ok());
  ASSERT_EQ(response.outputs.size(), 1u);
  EXPECT_EQ(response.outputs[0].name, "OUTPUT1");
}

TEST_P(ClientServerTest, FloatsRoundTripExactlyThroughIdentity) {
  const std::vector<float> values = {0.1f, -2.5f, 3.0e-8f, 12345.678f, 0.0f, 1.0f / 3.0f};
  InferSpec spec;
  spec.model_name = "identity";
  spec.inputs.push_back(
      {.name = "INPUT0", .tensor = *Tensor::FromValues<float>({2, 3}, values), .parameters = {}});
  spec.binary_inputs = binary();
  spec.binary_outputs = binary();
  InferResponse response;
  // Many requests on one client: the connection and buffers are reused.
  for (int i = 0; i < 50; ++i) {
    absl::Status status = client_->Infer(spec, &response);
    ASSERT_TRUE(status.ok()) << "request " << i << ": " << status;
  }
  ASSERT_EQ(response.outputs.size(), 1u);
  const Tensor& out = response.outputs[0].tensor;
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(std::vector<float>(out.values<float>().begin(), out.values<float>().end()), values);
}

TEST_P(ClientServerTest, BadRequestIsInvalidArgumentNamingTheInput) {
  InferSpec spec = AddSub();
  spec.inputs[0].tensor = *Tensor::Zeros(DataType::kFp32, {1, 16});
  InferResponse response;
  absl::Status status = client_->Infer(spec, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("INPUT0"), std::string::npos) << status;
  EXPECT_EQ(ProtocolStatus(status), GetParam() == Wire::kGrpc ? 3 : 400);
  // The connection stays usable after an error.
  EXPECT_TRUE(client_->Infer(AddSub(), &response).ok());
}

TEST_P(ClientServerTest, StatisticsCountTheRequests) {
  InferResponse response;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client_->Infer(AddSub(), &response).ok());
  absl::StatusOr<std::vector<protocol::ModelStatistics>> stats =
      client_->GetModelStatistics("simple", "");
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->size(), 1u);
  const protocol::ModelStatistics& simple = (*stats)[0];
  EXPECT_EQ(simple.name, "simple");
  EXPECT_GE(simple.inference_stats.success.count, 5u);
  EXPECT_GE(simple.inference_stats.compute_infer.count, 5u);
  EXPECT_GT(simple.inference_stats.compute_infer.ns, 0u);
  EXPECT_GT(simple.execution_count, 0u);

  absl::StatusOr<std::vector<protocol::ModelStatistics>> all = client_->GetModelStatistics("", "");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_GE(all->size(), 2u);
}

TEST_P(ClientServerTest, RepositoryIndexUnloadAndLoad) {
  // Each protocol unloads and reloads its own model name, so the suite's order does not matter.
  absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> index =
      client_->RepositoryIndex(false);
  ASSERT_TRUE(index.ok()) << index.status();
  bool found = false;
  for (const protocol::RepositoryIndexEntry& model : *index) found |= model.name == "identity";
  EXPECT_TRUE(found);

  ASSERT_TRUE(client_->UnloadModel("identity").ok());
  absl::StatusOr<bool> ready = client_->ModelReady("identity", "");
  EXPECT_TRUE(!ready.ok() || !*ready);
  absl::Status load = client_->LoadModel("identity", "");
  ASSERT_TRUE(load.ok()) << load;
  EXPECT_EQ(client_->ModelReady("identity", "").value_or(false), true);

  EXPECT_FALSE(client_->LoadModel("no_such_model", "").ok());
}

INSTANTIATE_TEST_SUITE_P(AllWires, ClientServerTest,
                         ::testing::Values(Wire::kHttpJson, Wire::kHttpBinary, Wire::kGrpc),
                         WireName);

}  // namespace
}  // namespace brigade::client
