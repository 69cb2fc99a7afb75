// Access control end to end: a real InferenceServer behind the real HTTP and gRPC front ends on
// loopback, sharing one AccessGate, driven by a raw HTTP client and a gRPC stub.

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "frontend/auth/access_gate.h"
#include "frontend/auth/token_store.h"
#include "frontend/grpc/grpc_server.h"
#include "frontend/http/http_server.h"
#include "frontend/http/kserve_http_handler.h"
#include "frontend/http/metrics_http_handler.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "net/test_client.h"
#include "protocol/grpc_service.grpc.pb.h"
#include "testing/temp_repository.h"

namespace brigade::frontend {
namespace {

using net::testing::ClientResponse;
using net::testing::GetRequest;
using net::testing::PostRequest;
using net::testing::TestClient;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kInferToken[] = "infer-token-0123456789abcdef";
constexpr char kAdminToken[] = "admin-token-0123456789abcdef";
constexpr char kMetricsToken[] = "metrics-token-0123456789abcd";

std::string Bearer(const char* token) {
  return std::string("Authorization: Bearer ") + token + "\r\n";
}

class AccessControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_.AddModel("simple", brigade::testing::kAddSubConfig);
    repo_.AddModel("identity", brigade::testing::kIdentityConfig);
    token_path_ = repo_.path() + "/../brigade-access-tokens-" + std::to_string(getpid());
    std::ofstream(token_path_) << "infer " << kInferToken << " app\nadmin " << kAdminToken
                               << " ops\nmetrics " << kMetricsToken << " prometheus\n";
    ASSERT_EQ(chmod(token_path_.c_str(), 0600), 0);
  }

  void TearDown() override {
    stub_.reset();
    channel_.reset();
    if (grpc_ != nullptr) grpc_->Shutdown(absl::ZeroDuration());
    if (http_ != nullptr) http_->Shutdown(absl::ZeroDuration());
    if (metrics_http_ != nullptr) metrics_http_->Shutdown(absl::ZeroDuration());
    grpc_.reset();
    http_.reset();
    metrics_http_.reset();
    handler_.reset();
    metrics_handler_.reset();
    gate_.reset();
    server_.reset();
    std::filesystem::remove(token_path_);
  }

  void Start(auth::PolicyOptions policy, bool with_tokens) {
    InferenceServer::Options options;
    options.model_repository = repo_.path();
    options.control_mode = ModelControlMode::kExplicit;
    options.startup_models = {"*"};
    options.pin_threads = false;
    auto server = InferenceServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    if (with_tokens) {
      auto store = auth::TokenStore::Create(token_path_);
      ASSERT_TRUE(store.ok()) << store.status();
      store_ = *std::move(store);
    }
    auto gate = auth::AccessGate::Create({.policy = std::move(policy),
                                          .tokens = store_.get(),
                                          .registry = server_->observer()->registry()});
    ASSERT_TRUE(gate.ok()) << gate.status();
    gate_ = *std::move(gate);

    KServeHttpHandler::Options handler_options;
    handler_options.access_gate = gate_.get();
    auto handler = KServeHttpHandler::Create(server_.get(), std::move(handler_options));
    ASSERT_TRUE(handler.ok());
    handler_ = *std::move(handler);
    HttpServer::Options http_options;
    http_options.address = "127.0.0.1";
    http_options.port = 0;
    auto http = HttpServer::Create(http_options, handler_.get());
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
    metrics_handler_ = std::make_unique<MetricsHttpHandler>(server_.get(), gate_.get());
    auto metrics_http = HttpServer::Create(http_options, metrics_handler_.get());
    ASSERT_TRUE(metrics_http.ok());
    metrics_http_ = *std::move(metrics_http);

    GrpcServer::Options grpc_options;
    grpc_options.host = "127.0.0.1";
    grpc_options.port = 0;
    grpc_options.health_poll = absl::ZeroDuration();
    grpc_options.service.access_gate = gate_.get();
    grpc_options.cache_admin.access_gate = gate_.get();
    auto grpc_server = GrpcServer::Create(server_.get(), grpc_options);
    ASSERT_TRUE(grpc_server.ok()) << grpc_server.status();
    grpc_ = *std::move(grpc_server);
    channel_ = grpc::CreateChannel(grpc_->address(), grpc::InsecureChannelCredentials());
    stub_ = inference::GRPCInferenceService::NewStub(channel_);
  }

  ClientResponse Http(const std::string& request, int port = 0) {
    TestClient client(port == 0 ? http_->port() : port);
    client.Send(request);
    std::optional<ClientResponse> response = client.Read();
    EXPECT_TRUE(response.has_value()) << request.substr(0, 80);
    return response.value_or(ClientResponse{});
  }

  grpc::Status GrpcMetadata(const std::string& key, const std::string& value) {
    grpc::ClientContext context;
    if (!key.empty()) context.AddMetadata(key, value);
    inference::ModelMetadataRequest request;
    request.set_name("simple");
    inference::ModelMetadataResponse response;
    return stub_->ModelMetadata(&context, request, &response);
  }

  brigade::testing::TempRepository repo_;
  std::string token_path_;
  std::unique_ptr<InferenceServer> server_;
  std::unique_ptr<auth::TokenStore> store_;
  std::unique_ptr<auth::AccessGate> gate_;
  std::unique_ptr<KServeHttpHandler> handler_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<MetricsHttpHandler> metrics_handler_;
  std::unique_ptr<HttpServer> metrics_http_;
  std::unique_ptr<GrpcServer> grpc_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

TEST_F(AccessControlTest, HttpAnswers401WithoutAValidTokenAnd403WithoutTheScope) {
  ASSERT_NO_FATAL_FAILURE(Start({}, /*with_tokens=*/true));
  EXPECT_EQ(Http(GetRequest("/v2/health/ready")).status, 200);

  ClientResponse missing = Http(GetRequest("/v2/models/simple"));
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.header("www-authenticate"), "Bearer realm=\"brigade\"");
  EXPECT_THAT(missing.body, HasSubstr("\"error\""));

  ClientResponse invalid =
      Http(GetRequest("/v2/models/simple", Bearer("wrong-token-0123456789abcdef")));
  EXPECT_EQ(invalid.status, 401);
  EXPECT_THAT(invalid.header("www-authenticate"), HasSubstr("error=\"invalid_token\""));
  EXPECT_THAT(invalid.body, Not(HasSubstr("wrong-token")));

  EXPECT_EQ(Http(GetRequest("/v2/models/simple", Bearer(kInferToken))).status, 200);

  ClientResponse scope =
      Http(PostRequest("/v2/repository/models/simple/unload", "", Bearer(kInferToken)));
  EXPECT_EQ(scope.status, 403);
  EXPECT_THAT(scope.header("www-authenticate"), HasSubstr("scope=\"admin\""));
  EXPECT_EQ(Http(GetRequest("/v2/models/simple/ready", Bearer(kInferToken))).status, 200);

  EXPECT_EQ(
      Http(PostRequest("/v2/repository/models/simple/unload", "", Bearer(kAdminToken))).status,
      200);
  EXPECT_EQ(Http(GetRequest("/v2/models/simple/ready", Bearer(kInferToken))).status, 400);
}

TEST_F(AccessControlTest, MetricsNeedTheMetricsScopeAndCountEveryRefusal) {
  ASSERT_NO_FATAL_FAILURE(Start({}, /*with_tokens=*/true));
  EXPECT_EQ(Http(GetRequest("/v2")).status, 401);
  EXPECT_EQ(Http(GetRequest("/v2", Bearer("wrong-token-0123456789abcdef"))).status, 401);
  EXPECT_EQ(Http(GetRequest("/metrics", Bearer(kInferToken))).status, 403);
  EXPECT_EQ(Http(GetRequest("/metrics"), metrics_http_->port()).status, 401);
  EXPECT_EQ(GrpcMetadata("", "").error_code(), grpc::StatusCode::UNAUTHENTICATED);

  ClientResponse metrics = Http(GetRequest("/metrics", Bearer(kMetricsToken)));
  ASSERT_EQ(metrics.status, 200);
  EXPECT_THAT(
      metrics.body,
      HasSubstr("brigade_auth_refusals_total{protocol=\"http\",reason=\"missing_token\"} 2"));
  EXPECT_THAT(
      metrics.body,
      HasSubstr("brigade_auth_refusals_total{protocol=\"http\",reason=\"invalid_token\"} 1"));
  EXPECT_THAT(metrics.body,
              HasSubstr("brigade_auth_refusals_total{protocol=\"http\",reason=\"scope\"} 1"));
  EXPECT_THAT(
      metrics.body,
      HasSubstr("brigade_auth_refusals_total{protocol=\"grpc\",reason=\"missing_token\"} 1"));
  EXPECT_EQ(Http(GetRequest("/metrics", Bearer(kMetricsToken)), metrics_http_->port()).status, 200);
}

TEST_F(AccessControlTest, GrpcAnswersUnauthenticatedAndPermissionDenied) {
  ASSERT_NO_FATAL_FAILURE(Start({}, /*with_tokens=*/true));
  {
    grpc::ClientContext context;
    inference::ServerLiveResponse response;
    EXPECT_TRUE(stub_->ServerLive(&context, {}, &response).ok());
    EXPECT_TRUE(response.live());
  }
  EXPECT_EQ(GrpcMetadata("", "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(GrpcMetadata("authorization", "Bearer wrong-token-0123456789abcdef").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(GrpcMetadata("authorization", std::string("Bearer ") + kInferToken).ok());
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", std::string("Bearer ") + kInferToken);
    inference::RepositoryModelUnloadRequest request;
    request.set_model_name("simple");
    inference::RepositoryModelUnloadResponse response;
    const grpc::Status status = stub_->RepositoryModelUnload(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(status.error_message(), HasSubstr("lacks scope 'admin'"));
  }
  {
    grpc::ClientContext context;
    auto stream = stub_->ModelStreamInfer(&context);
    inference::ModelStreamInferResponse reply;
    EXPECT_FALSE(stream->Read(&reply));
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
}

TEST_F(AccessControlTest, TritonsRestrictedApiFlagsRefuseAsTritonDoes) {
  auth::PolicyOptions policy;
  ASSERT_TRUE(
      auth::AddRestriction(*auth::ParseRestriction("model-repository:admin-key=s3cret", "http"),
                           &policy.http_restrictions)
          .ok());
  ASSERT_TRUE(auth::AddRestriction(*auth::ParseRestriction("metadata:meta-key=m3ta", "grpc"),
                                   &policy.grpc_restrictions)
                  .ok());
  ASSERT_NO_FATAL_FAILURE(Start(std::move(policy), /*with_tokens=*/false));

  ClientResponse refused = Http(PostRequest("/v2/repository/index", "{}"));
  EXPECT_EQ(refused.status, 403);
  EXPECT_THAT(refused.body, HasSubstr("restricted"));
  EXPECT_EQ(Http(PostRequest("/v2/repository/index", "{}",
                             "Content-Type: application/json\r\nadmin-key: s3cret\r\n"))
                .status,
            200);
  EXPECT_EQ(Http(GetRequest("/v2/models/simple/ready")).status, 200);

  const grpc::Status unrestricted_header = GrpcMetadata("meta-key", "m3ta");
  EXPECT_EQ(unrestricted_header.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(unrestricted_header.error_message(), HasSubstr("triton-grpc-protocol-meta-key"));
  EXPECT_EQ(GrpcMetadata("triton-grpc-protocol-meta-key", "wrong").error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(GrpcMetadata("triton-grpc-protocol-meta-key", "m3ta").ok());
}

TEST_F(AccessControlTest, ACrossSiteTextPlainPostCannotUnloadAModel) {
  auth::PolicyOptions policy;
  policy.allowed_hosts = {"t", "127.0.0.1"};
  ASSERT_NO_FATAL_FAILURE(Start(std::move(policy), /*with_tokens=*/false));
  // What a page elsewhere can send without a preflight: text/plain, with its Origin.
  EXPECT_EQ(
      Http(PostRequest("/v2/repository/models/simple/unload", "{}", "Content-Type: text/plain\r\n"))
          .status,
      415);
  EXPECT_EQ(Http(PostRequest("/v2/repository/models/simple/unload", "",
                             "Origin: http://attacker.example\r\n"))
                .status,
            403);
  EXPECT_EQ(Http(GetRequest("/v2/models/simple/ready")).status, 200);
  // DNS rebinding: the attacker's name in Host.
  EXPECT_EQ(Http("GET /v2 HTTP/1.1\r\nHost: attacker.example\r\n\r\n").status, 403);
  // A local client's JSON unload is fine.
  EXPECT_EQ(Http(PostRequest("/v2/repository/models/simple/unload", "{}",
                             "Content-Type: application/json\r\n"))
                .status,
            200);
  EXPECT_EQ(Http(GetRequest("/v2/models/simple/ready")).status, 400);
}

TEST_F(AccessControlTest, ATokenFileRewrittenWhileServingTakesEffectOnReload) {
  ASSERT_NO_FATAL_FAILURE(Start({}, /*with_tokens=*/true));
  EXPECT_EQ(Http(GetRequest("/v2", Bearer(kInferToken))).status, 200);
  std::ofstream(token_path_, std::ios::trunc) << "infer rotated-token-0123456789abcdef app\n";
  ASSERT_TRUE(store_->Reload().ok());
  EXPECT_EQ(Http(GetRequest("/v2", Bearer(kInferToken))).status, 401);
  EXPECT_EQ(Http(GetRequest("/v2", Bearer("rotated-token-0123456789abcdef"))).status, 200);
}

}  // namespace
}  // namespace brigade::frontend
