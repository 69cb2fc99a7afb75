// GrpcTlsCredentials behind a real GrpcServer (an InferenceServer over an empty repository):
// TLS, mutual TLS, and a rotation through the watched private copy; certificates made in memory.

#include "frontend/grpc/grpc_tls_credentials.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
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

TEST_F(GrpcTlsCredentialsTest, ServesTlsAndRefusesPlaintext) {
  Start({});
  EXPECT_TRUE(Live(Trusting(pki_)).ok());
  EXPECT_EQ(Live(grpc::InsecureChannelCredentials()).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(GrpcTlsCredentialsTest, RefreshMustBeWholeSecondsOfAtLeastOne) {
  EXPECT_FALSE(
      GrpcTlsCredentials::Create(tls::ServerCredentials(pki_), {.refresh = absl::ZeroDuration()})
          .ok());
  EXPECT_FALSE(GrpcTlsCredentials::Create(tls::ServerCredentials(pki_),
                                          {.refresh = absl::Milliseconds(1500)})
                   .ok());
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
  Start({.require_client_cert = true});
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
    auto tls = GrpcTlsCredentials::Create(tls::ServerCredentials(pki_), {});
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

// What a killed server leaves behind must hold no key: the copy's files are links into the
// process's own in-memory files, never regular files on disk.
TEST_F(GrpcTlsCredentialsTest, ThePrivateCopyHoldsNoKeyOnDisk) {
  const tls::TlsCredentials credentials = tls::ServerCredentials(pki_);
  auto tls = GrpcTlsCredentials::Create(credentials, {.require_client_cert = true});
  ASSERT_TRUE(tls.ok()) << tls.status();
  int links = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator((*tls)->directory())) {
    EXPECT_FALSE(entry.is_regular_file() && !entry.is_symlink()) << entry.path();
    if (entry.is_symlink() && entry.path().filename() != "current") {
      EXPECT_TRUE(
          std::filesystem::read_symlink(entry.path()).string().starts_with("/proc/self/fd/"))
          << entry.path();
      ++links;
    }
  }
  EXPECT_EQ(links, 3);
  // Read through the link, the key is there for gRPC.
  std::ifstream key((*tls)->directory() + "/current/key.pem");
  const std::string text((std::istreambuf_iterator<char>(key)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, credentials.private_key_pem);
}

TEST_F(GrpcTlsCredentialsTest, DirectoriesOfProcessesThatAreGoneAreRemoved) {
  const std::string tmp = repository_.path();
  // A pid that no process has: past /proc/sys/kernel/pid_max's largest possible value.
  const std::string gone = tmp + "/brigade-grpc-tls-2147483000-abcdef";
  const std::string alive = tmp + "/brigade-grpc-tls-" + std::to_string(getpid()) + "-abcdef";
  const std::string other = tmp + "/brigade-grpc-tls-x-abcdef";
  for (const std::string& dir : {gone, alive, other}) {
    ASSERT_TRUE(std::filesystem::create_directories(dir + "/g1"));
    std::filesystem::create_symlink("/proc/self/fd/999", dir + "/g1/key.pem");
  }
  EXPECT_EQ(RemoveStaleGrpcTlsDirectories(tmp), 1);
  EXPECT_FALSE(std::filesystem::exists(gone));
  EXPECT_TRUE(std::filesystem::exists(alive));
  EXPECT_TRUE(std::filesystem::exists(other));
}

}  // namespace
}  // namespace brigade::frontend
