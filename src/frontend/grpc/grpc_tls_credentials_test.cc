// GrpcTlsCredentials behind a real GrpcServer (an InferenceServer over an empty repository):
// TLS, mutual TLS, and a rotation through the watched private copy; certificates made in memory.

#include "frontend/grpc/grpc_tls_credentials.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "frontend/grpc/grpc_server.h"
#include "frontend/tls/test_pki.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "protocol/grpc_service.grpc.pb.h"
#include "testing/temp_repository.h"

namespace brigade::frontend {
namespace {

using inference::GRPCInferenceService;

class GrpcTlsCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override { pki_ = tls::MakeTestPki(); }
  void TearDown() override {
    if (grpc_server_ != nullptr) grpc_server_->Shutdown(absl::ZeroDuration());
  }

  void Start(GrpcTlsCredentials::Options options) {
    absl::StatusOr<std::unique_ptr<GrpcTlsCredentials>> tls =
        GrpcTlsCredentials::Create(tls::ServerCredentials(pki_), options);
    ASSERT_TRUE(tls.ok()) << tls.status();
    tls_ = *std::move(tls);
    InferenceServer::Options server_options;
    server_options.model_repository = repository_.path();
    auto server = InferenceServer::Create(server_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    GrpcServer::Options grpc_options;
    grpc_options.host = "127.0.0.1";
    grpc_options.port = 0;
    grpc_options.health_poll = absl::ZeroDuration();
    grpc_options.credentials = tls_->credentials();
    auto grpc_server = GrpcServer::Create(server_.get(), grpc_options);
    ASSERT_TRUE(grpc_server.ok()) << grpc_server.status();
    grpc_server_ = *std::move(grpc_server);
  }

  // ServerLive over a new connection of its own with `credentials`.
  grpc::Status Live(const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
    grpc::ChannelArguments arguments;
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto channel = grpc::CreateCustomChannel(grpc_server_->address(), credentials, arguments);
    auto stub = GRPCInferenceService::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    inference::ServerLiveRequest request;
    inference::ServerLiveResponse response;
    return stub->ServerLive(&context, request, &response);
  }

  static std::shared_ptr<grpc::ChannelCredentials> Trusting(const tls::TestPki& pki,
                                                            bool client_cert = false) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = pki.ca_cert;
    if (client_cert) {
      options.pem_cert_chain = pki.client_cert;
      options.pem_private_key = pki.client_key;
    }
    return grpc::SslCredentials(options);
  }

  tls::TestPki pki_;
  testing::TempRepository repository_;
  std::unique_ptr<GrpcTlsCredentials> tls_;
  std::unique_ptr<InferenceServer> server_;
  std::unique_ptr<GrpcServer> grpc_server_;
};

TEST_F(GrpcTlsCredentialsTest, FixedCredentialsServeTlsAndRefusePlaintext) {
  Start({});
  EXPECT_TRUE(Live(Trusting(pki_)).ok());
  EXPECT_EQ(Live(grpc::InsecureChannelCredentials()).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(tls_->directory().empty());
  EXPECT_EQ(tls_->Update(tls::ServerCredentials(pki_)).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(GrpcTlsCredentialsTest, MutualTlsServesOnlyClientsWithACertificate) {
  Start({.require_client_cert = true});
  EXPECT_TRUE(Live(Trusting(pki_, /*client_cert=*/true)).ok());
  EXPECT_EQ(Live(Trusting(pki_)).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(GrpcTlsCredentialsTest, MutualTlsWithoutRootsIsRefused) {
  tls::TlsCredentials credentials = tls::ServerCredentials(pki_);
  credentials.root_certs_pem.clear();
  EXPECT_FALSE(GrpcTlsCredentials::Create(credentials, {.require_client_cert = true}).ok());
}

TEST_F(GrpcTlsCredentialsTest, AnUpdateReachesNewConnectionsThroughTheWatchedCopy) {
  Start({.require_client_cert = true, .refresh_secs = 1});
  ASSERT_TRUE(Live(Trusting(pki_, true)).ok());
  const tls::TestPki next = tls::MakeTestPki();
  ASSERT_TRUE(tls_->Update(tls::ServerCredentials(next)).ok());
  bool switched = false;
  for (int i = 0; i < 50 && !switched; ++i) {
    switched = Live(Trusting(next, true)).ok();
    if (!switched) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(switched);
  EXPECT_FALSE(Live(Trusting(pki_, true)).ok());
}

TEST_F(GrpcTlsCredentialsTest, ThePrivateCopyKeepsTwoGenerationsAndGoesAway) {
  std::string directory;
  {
    auto tls = GrpcTlsCredentials::Create(tls::ServerCredentials(pki_), {.refresh_secs = 1});
    ASSERT_TRUE(tls.ok()) << tls.status();
    directory = (*tls)->directory();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*tls)->Update(tls::ServerCredentials(pki_)).ok());
    EXPECT_FALSE(std::filesystem::exists(directory + "/g2"));
    EXPECT_TRUE(std::filesystem::exists(directory + "/g3/key.pem"));
    EXPECT_EQ(std::filesystem::read_symlink(directory + "/current"), "g4");
    EXPECT_EQ(std::filesystem::status(directory).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all);
  }
  EXPECT_FALSE(std::filesystem::exists(directory));
}

}  // namespace
}  // namespace brigade::frontend
