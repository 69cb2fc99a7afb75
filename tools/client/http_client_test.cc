// HttpClient against a scripted server: connection reuse and recovery, framing, error mapping,
// timeouts, and the binary extension on the wire.

#include "tools/client/http_client.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "net/test_http_server.h"
#include "tools/client/client_status.h"

namespace brigade::client {
namespace {

using Reply = net::TestHttpServer::Reply;
using Request = net::TestHttpServer::Request;

constexpr char kMetadata[] = R"({"name":"fake","version":"1","extensions":[]})";

std::unique_ptr<net::TestHttpServer> StartServer(net::TestHttpServer::Handler handler) {
  absl::StatusOr<std::unique_ptr<net::TestHttpServer>> server = net::TestHttpServer::Start(handler);
  EXPECT_TRUE(server.ok()) << server.status();
  return *std::move(server);
}

std::unique_ptr<Client> Connect(const net::TestHttpServer& server, int64_t timeout_ms = 10'000) {
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Create({.protocol = ClientProtocol::kHttp,
                      .address = "127.0.0.1:" + std::to_string(server.port()),
                      .timeout_ms = timeout_ms});
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

TEST(ParseHostPortTest, AcceptsTheUsualSpellings) {
  EXPECT_EQ(ParseHostPort("localhost:8000", 1)->port, 8000);
  EXPECT_EQ(ParseHostPort("http://example.com:81/", 1)->host, "example.com");
  EXPECT_EQ(ParseHostPort("example.com", 8001)->port, 8001);
  EXPECT_EQ(ParseHostPort("[::1]:9000", 1)->host, "::1");
  EXPECT_EQ(ParseHostPort("[::1]:9000", 1)->port, 9000);
  EXPECT_TRUE(ParseHostPort("https://x:1", 1)->https);
  EXPECT_FALSE(ParseHostPort("http://x:1", 1)->https);
  EXPECT_FALSE(ParseHostPort("x:1/v2", 1).ok());
  EXPECT_FALSE(ParseHostPort("x:99999", 1).ok());
  EXPECT_FALSE(ParseHostPort("::1:80", 1).ok());
  EXPECT_FALSE(ParseHostPort("x:", 1).ok());
}

TEST(HttpClientTest, SendsTheBearerTokenWithEveryRequest) {
  absl::Mutex mu;
  std::vector<std::string> heads;
  auto server = StartServer([&](const Request& request) {
    absl::MutexLock lock(&mu);
    heads.push_back(request.head);
    return Reply{net::TestHttpServer::Response(200, kMetadata)};
  });
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Create({.protocol = ClientProtocol::kHttp,
                      .address = "127.0.0.1:" + std::to_string(server->port()),
                      .bearer_token = "t0ken-value"});
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->GetServerMetadata().ok());
  ASSERT_TRUE((*client)->UnloadModel("m").ok());
  absl::MutexLock lock(&mu);
  ASSERT_EQ(heads.size(), 2u);
  for (const std::string& head : heads) {
    EXPECT_NE(head.find("\r\nAuthorization: Bearer t0ken-value\r\n"), std::string::npos) << head;
  }
}

TEST(HttpClientTest, RefusesABearerTokenWithASpace) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(
      {.protocol = ClientProtocol::kHttp, .address = "127.0.0.1:1", .bearer_token = "a b"});
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HttpClientTest, ReusesOneConnectionForManyRequests) {
  auto server = StartServer(
      [](const Request&) { return Reply{net::TestHttpServer::Response(200, kMetadata)}; });
  auto client = Connect(*server);
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<protocol::ServerMetadata> metadata = client->GetServerMetadata();
    ASSERT_TRUE(metadata.ok()) << metadata.status();
    EXPECT_EQ(metadata->name, "fake");
  }
  EXPECT_EQ(server->connections_accepted(), 1);
}

TEST(HttpClientTest, SendsHostAndPathAndReconnectsAfterConnectionClose) {
  absl::Mutex mu;
  std::vector<std::string> heads;
  auto server = StartServer([&](const Request& request) {
    absl::MutexLock lock(&mu);
    heads.push_back(request.head);
    return Reply{net::TestHttpServer::Response(200, kMetadata, "Connection: close\r\n"), true};
  });
  auto client = Connect(*server);
  ASSERT_TRUE(client->GetServerMetadata().ok());
  ASSERT_TRUE(client->GetServerMetadata().ok());
  EXPECT_EQ(server->connections_accepted(), 2);
  absl::MutexLock lock(&mu);
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_TRUE(heads[0].starts_with("GET /v2 HTTP/1.1\r\nHost: 127.0.0.1:")) << heads[0];
}

TEST(HttpClientTest, RetriesOnceWhenTheServerDroppedAReusedConnection) {
  auto server = StartServer([](const Request& request) {
    // The second request on a connection finds it closed (the keep-alive race).
    if (request.index_on_connection == 1) return Reply{"", true};
    return Reply{net::TestHttpServer::Response(200, kMetadata)};
  });
  auto client = Connect(*server);
  ASSERT_TRUE(client->GetServerMetadata().ok());
  absl::StatusOr<protocol::ServerMetadata> second = client->GetServerMetadata();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(server->connections_accepted(), 2);
}

TEST(HttpClientTest, DoesNotRetryOnAFreshConnection) {
  auto server = StartServer([](const Request&) { return Reply{"", true}; });
  auto client = Connect(*server);
  absl::Status status = client->GetServerMetadata().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_EQ(server->connections_accepted(), 1);
}

TEST(HttpClientTest, ConnectionRefusedIsUnavailable) {
  int port = 0;
  {
    auto server = StartServer([](const Request&) { return Reply{}; });
    port = server->port();
  }
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Create({.address = "127.0.0.1:" + std::to_string(port)});
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->ServerLive().status().code(), absl::StatusCode::kUnavailable);
}

TEST(HttpClientTest, ReadsChunkedBodies) {
  auto server = StartServer([](const Request&) {
    return Reply{
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "10\r\n{\"name\":\"chunky\"\r\n1\r\n}\r\n0\r\n\r\n"};
  });
  auto client = Connect(*server);
  absl::StatusOr<protocol::ServerMetadata> metadata = client->GetServerMetadata();
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  EXPECT_EQ(metadata->name, "chunky");
}

TEST(HttpClientTest, ServerErrorsCarryStatusAndMessage) {
  auto server = StartServer([](const Request&) {
    return Reply{net::TestHttpServer::Response(404, R"({"error":"unknown model 'nope'"})")};
  });
  auto client = Connect(*server);
  absl::Status status = client->GetModelMetadata("nope", "").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "unknown model 'nope'");
  EXPECT_EQ(HttpStatusOf(status), 404);
}

TEST(HttpClientTest, HealthAnswersFollowTheStatusCode) {
  std::atomic<int> status_to_send = 200;
  auto server = StartServer([&status_to_send](const Request&) {
    return Reply{net::TestHttpServer::Response(status_to_send.load(), "")};
  });
  auto client = Connect(*server);
  EXPECT_EQ(client->ServerReady().value_or(false), true);
  status_to_send = 400;
  EXPECT_EQ(client->ServerReady().value_or(true), false);
  status_to_send = 503;
  EXPECT_EQ(client->ModelReady("m", "1").value_or(true), false);
  status_to_send = 500;
  EXPECT_EQ(client->ServerLive().status().code(), absl::StatusCode::kInternal);
}

TEST(HttpClientTest, SilentServerTimesOutAndTheNextCallReconnects) {
  auto server = StartServer([](const Request& request) {
    if (request.connection == 0) return Reply{"", false, true};  // never answers
    return Reply{net::TestHttpServer::Response(200, kMetadata)};
  });
  auto client = Connect(*server, /*timeout_ms=*/100);
  EXPECT_EQ(client->GetServerMetadata().status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(client->GetServerMetadata().ok());
  EXPECT_EQ(server->connections_accepted(), 2);
}

TEST(HttpClientTest, BinaryInferSendsHeaderLengthAndRawBytesAndReadsBinaryOutputs) {
  absl::Mutex mu;
  Request seen;
  const float answer[2] = {3.0f, 4.0f};
  auto server = StartServer([&](const Request& request) {
    absl::MutexLock lock(&mu);
    seen = request;
    const std::string json =
        R"({"model_name":"m","outputs":[{"name":"OUT","datatype":"FP32","shape":[2],)"
        R"("parameters":{"binary_data_size":8}}]})";
    std::string body = json;
    body.append(reinterpret_cast<const char*>(answer), sizeof(answer));
    return Reply{net::TestHttpServer::Response(
        200, body, "Inference-Header-Content-Length: " + std::to_string(json.size()) + "\r\n")};
  });
  auto client = Connect(*server);
  InferSpec request;
  request.model_name = "m";
  const std::vector<float> values = {1.0f, 2.0f};
  request.inputs.push_back(
      {.name = "IN", .tensor = *Tensor::FromValues<float>({2}, values), .parameters = {}});
  request.binary_inputs = true;
  request.binary_outputs = true;
  InferResponse response;
  absl::Status status = client->Infer(request, &response);
  ASSERT_TRUE(status.ok()) << status;
  absl::MutexLock lock(&mu);
  EXPECT_TRUE(seen.head.starts_with("POST /v2/models/m/infer HTTP/1.1\r\n")) << seen.head;
  const size_t json_bytes = seen.body.size() - 8;
  EXPECT_NE(seen.head.find("Inference-Header-Content-Length: " + std::to_string(json_bytes)),
            std::string::npos)
      << seen.head;
  EXPECT_EQ(std::memcmp(seen.body.data() + json_bytes, values.data(), 8), 0);
  ASSERT_EQ(response.outputs.size(), 1u);
  EXPECT_EQ(response.outputs[0].tensor.values<float>()[1], 4.0f);
}

TEST(HttpClientTest, OutputsHeldByTheCallerSurviveTheNextRequest) {
  std::atomic<int> call = 0;
  auto server = StartServer([&call](const Request&) {
    const float value = static_cast<float>(++call);
    std::string json = R"({"outputs":[{"name":"OUT","datatype":"FP32","shape":[1],)"
                       R"("parameters":{"binary_data_size":4}}]})";
    const size_t json_bytes = json.size();
    json.append(reinterpret_cast<const char*>(&value), 4);
    return Reply{net::TestHttpServer::Response(
        200, json, "Inference-Header-Content-Length: " + std::to_string(json_bytes) + "\r\n")};
  });
  auto client = Connect(*server);
  InferSpec request;
  request.model_name = "m";
  request.binary_outputs = true;
  InferResponse first;
  InferResponse second;
  ASSERT_TRUE(client->Infer(request, &first).ok());
  ASSERT_TRUE(client->Infer(request, &second).ok());
  EXPECT_EQ(first.outputs[0].tensor.values<float>()[0], 1.0f);
  EXPECT_EQ(second.outputs[0].tensor.values<float>()[0], 2.0f);
}

TEST(HttpClientTest, MalformedAnswersAreInternalErrors) {
  auto server = StartServer(
      [](const Request&) { return Reply{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"}; });
  auto client = Connect(*server);
  EXPECT_EQ(client->GetServerMetadata().status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace brigade::client
