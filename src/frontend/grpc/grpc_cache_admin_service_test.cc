// brigade.admin.CacheAdmin end to end inside one process: real InferenceServers (builtin identity
// model with `response_cache { enable: true }`) behind real gRPC servers on loopback ports,
// called through the generated C++ stubs. Whether an answer came from the cache is read from its
// `cache_hit` response parameter. The broadcast case runs two servers on one real redis-server.

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cache/redis_test_server.h"
#include "core/strings.h"
#include "frontend/grpc/grpc_server.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "protocol/cache_admin.grpc.pb.h"
#include "protocol/grpc_service.grpc.pb.h"
#include "testing/temp_repository.h"

namespace brigade::frontend {
namespace {

using ::testing::HasSubstr;

// The builtin identity model, cached in memory; a second cached model to check scopes.
std::string CachedIdentityConfig(std::string_view extra = "") {
  return StrCat(testing::kIdentityConfig, "\nresponse_cache { enable: true ", extra, " }\n");
}

enum class Outcome { kHit, kMiss, kError };

// One gRPC server in front of one InferenceServer.
struct Node {
  std::unique_ptr<InferenceServer> server;
  std::unique_ptr<GrpcServer> grpc;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<inference::GRPCInferenceService::Stub> infer;
  std::unique_ptr<brigade::admin::CacheAdmin::Stub> admin;

  // Sends [value, value + 1] to `model`; answers whether the cache served it.
  Outcome Infer(const std::string& model, float value) {
    inference::ModelInferRequest request;
    request.set_model_name(model);
    auto* input = request.add_inputs();
    input->set_name("INPUT0");
    input->set_datatype("FP32");
    input->add_shape(1);
    input->add_shape(2);
    const float values[2] = {value, value + 1};
    request.add_raw_input_contents(std::string(reinterpret_cast<const char*>(values), 8));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    inference::ModelInferResponse response;
    const grpc::Status status = infer->ModelInfer(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (!status.ok() || response.raw_output_contents_size() != 1) return Outcome::kError;
    float out[2] = {0, 0};
    EXPECT_EQ(response.raw_output_contents(0).size(), 8u);
    std::memcpy(out, response.raw_output_contents(0).data(), 8);
    EXPECT_EQ(out[0], value);  // a cached answer is still this request's answer
    EXPECT_EQ(out[1], value + 1);
    auto hit = response.parameters().find("cache_hit");
    return hit != response.parameters().end() && hit->second.bool_param() ? Outcome::kHit
                                                                          : Outcome::kMiss;
  }

  // Sends a new input (a miss) and then repeats it until it hits: answers are stored after the
  // client is answered, so an immediate repeat may still miss. False if no hit within 5 s.
  bool Prime(const std::string& model, float value) {
    if (Infer(model, value) != Outcome::kMiss) return false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      if (Infer(model, value) == Outcome::kHit) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  grpc::Status Invalidate(const std::string& model, const std::string& version) {
    brigade::admin::CacheInvalidateRequest request;
    request.set_model_name(model);
    request.set_model_version(version);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    brigade::admin::CacheInvalidateResponse response;
    return admin->Invalidate(&context, request, &response);
  }
};

class GrpcCacheAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repository_.AddModel("identity", CachedIdentityConfig());
    repository_.AddModel("other", CachedIdentityConfig());
  }

  // A node on the test's repository, with a Redis tier when `redis_port` > 0.
  std::unique_ptr<Node> StartNode(int redis_port = 0) {
    auto node = std::make_unique<Node>();
    InferenceServer::Options options;
    options.model_repository = repository_.path();
    options.pin_threads = false;
    if (redis_port > 0) {
      options.cache_redis_host = "127.0.0.1";
      options.cache_redis_port = redis_port;
    }
    auto server = InferenceServer::Create(options);
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return nullptr;
    node->server = *std::move(server);
    GrpcServer::Options grpc_options;
    grpc_options.host = "127.0.0.1";
    grpc_options.port = 0;
    grpc_options.health_poll = absl::ZeroDuration();
    auto grpc_server = GrpcServer::Create(node->server.get(), grpc_options);
    EXPECT_TRUE(grpc_server.ok()) << grpc_server.status();
    if (!grpc_server.ok()) return nullptr;
    node->grpc = *std::move(grpc_server);
    node->channel = grpc::CreateChannel(node->grpc->address(), grpc::InsecureChannelCredentials());
    node->infer = inference::GRPCInferenceService::NewStub(node->channel);
    node->admin = brigade::admin::CacheAdmin::NewStub(node->channel);
    return node;
  }

  testing::TempRepository repository_;
};

TEST_F(GrpcCacheAdminTest, InvalidatingAModelMakesItsNextRequestAMiss) {
  std::unique_ptr<Node> node = StartNode();
  ASSERT_NE(node, nullptr);
  ASSERT_TRUE(node->Prime("identity", 1));

  const grpc::Status status = node->Invalidate("identity", "");
  ASSERT_TRUE(status.ok()) << status.error_message();
  // Dropped before the call returned: the next request misses, and the entry comes back.
  EXPECT_TRUE(node->Prime("identity", 1));
}

TEST_F(GrpcCacheAdminTest, ScopeLeavesOtherModelsAndVersionsCached) {
  std::unique_ptr<Node> node = StartNode();
  ASSERT_NE(node, nullptr);
  ASSERT_TRUE(node->Prime("identity", 2));
  ASSERT_TRUE(node->Prime("other", 2));

  // Another model, and a version of this model that holds nothing: nothing of ours is dropped.
  ASSERT_TRUE(node->Invalidate("other", "").ok());
  ASSERT_TRUE(node->Invalidate("identity", "7").ok());
  EXPECT_EQ(node->Infer("identity", 2), Outcome::kHit);
  EXPECT_TRUE(node->Prime("other", 2));  // a miss first

  // The version that answered (1) and then everything.
  ASSERT_TRUE(node->Invalidate("identity", "1").ok());
  EXPECT_TRUE(node->Prime("identity", 2));  // a miss first
  ASSERT_EQ(node->Infer("other", 2), Outcome::kHit);
  ASSERT_TRUE(node->Invalidate("", "").ok());
  EXPECT_EQ(node->Infer("identity", 2), Outcome::kMiss);
  EXPECT_EQ(node->Infer("other", 2), Outcome::kMiss);
}

TEST_F(GrpcCacheAdminTest, BadVersionIsInvalidArgumentAndDropsNothing) {
  std::unique_ptr<Node> node = StartNode();
  ASSERT_NE(node, nullptr);
  ASSERT_TRUE(node->Prime("identity", 3));

  grpc::Status status = node->Invalidate("identity", "latest");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("latest"));
  status = node->Invalidate("", "1");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("model name"));
  EXPECT_EQ(node->Infer("identity", 3), Outcome::kHit);
}

TEST_F(GrpcCacheAdminTest, InvalidationReachesAnotherServerThroughRedis) {
  absl::StatusOr<std::unique_ptr<cache::RedisTestServer>> redis = cache::RedisTestServer::Start();
  if (!redis.ok()) GTEST_SKIP() << "no redis-server: " << redis.status();
  // Memory tier only, so B's hit below can only come from B's own memory; the Redis connection
  // carries the broadcast.
  std::unique_ptr<Node> a = StartNode((*redis)->port());
  std::unique_ptr<Node> b = StartNode((*redis)->port());
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->Prime("identity", 4));

  const grpc::Status status = a->Invalidate("identity", "");
  ASSERT_TRUE(status.ok()) << status.error_message();
  // The message reaches B asynchronously (pub/sub); until then B still hits. A miss re-stores the
  // entry, so the first miss is the proof and the loop ends there.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  Outcome outcome = Outcome::kHit;
  while (outcome == Outcome::kHit && std::chrono::steady_clock::now() < deadline) {
    outcome = b->Infer("identity", 4);
    if (outcome == Outcome::kHit) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(outcome, Outcome::kMiss) << "B still answers from its memory tier after 5 s";
}

}  // namespace
}  // namespace brigade::frontend
