// HttpConnection's raw mode and TestHttpServer against each other: what the server's transport
// tests rely on (pipelined answers, timeouts that keep the connection, interim answers, closes
// left to the caller), and the test server's own request parsing and answers.

#include "net/http_connection.h"

#include <sys/uio.h>

#include <string>

#include "gtest/gtest.h"
#include "net/test_client.h"
#include "net/test_http_server.h"

namespace brigade::net {
namespace {

using Reply = TestHttpServer::Reply;
using Request = TestHttpServer::Request;

std::unique_ptr<TestHttpServer> StartServer(TestHttpServer::Handler handler) {
  absl::StatusOr<std::unique_ptr<TestHttpServer>> server = TestHttpServer::Start(handler);
  EXPECT_TRUE(server.ok()) << server.status();
  return *std::move(server);
}

std::unique_ptr<HttpConnection> Connect(const TestHttpServer& server) {
  absl::StatusOr<std::unique_ptr<HttpConnection>> connection =
      HttpConnection::Create({.host = "127.0.0.1", .port = server.port(), .timeout_ms = 5'000});
  EXPECT_TRUE(connection.ok()) << connection.status();
  return *std::move(connection);
}

std::string_view Body(const ReceiveBuffer& buffer, const HttpResponse& response) {
  return buffer.view().substr(response.body_offset, response.body_bytes);
}

TEST(HttpConnectionTest, RoundTripSendsTheGatheredPartsAndReadsTheAnswer) {
  auto server = StartServer([](const Request& request) {
    return TestHttpServer::Answer(request, 200, "text/plain", request.method + " " + request.body);
  });
  auto connection = Connect(*server);
  const std::string head = "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n";
  const iovec parts[] = {{const_cast<char*>(head.data()), head.size()},
                         {const_cast<char*>("he"), 2},
                         {const_cast<char*>("llo"), 3}};
  ReceiveBuffer buffer;
  absl::StatusOr<HttpResponse> response = connection->RoundTrip(parts, &buffer);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->head.status, 200);
  EXPECT_EQ(Body(buffer, *response), "POST hello");
  EXPECT_TRUE(connection->connected());
}

TEST(HttpConnectionTest, RawModeKeepsPipelinedAnswersForTheNextRead) {
  auto server = StartServer(
      [](const Request& request) { return Reply{TestHttpServer::Response(200, request.target)}; });
  auto connection = Connect(*server);
  ASSERT_TRUE(connection->SendRaw("GET /a HTTP/1.1\r\n\r\nGET /bb HTTP/1.1\r\n\r\n").ok());
  ReceiveBuffer buffer;
  for (const char* expected : {"/a", "/bb"}) {
    absl::StatusOr<HttpResponse> response = connection->ReadResponse(&buffer, 5'000);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(Body(buffer, *response), expected);
  }
}

TEST(HttpConnectionTest, RawModeTimeoutKeepsTheConnectionAndThePartialAnswer) {
  auto server = StartServer([](const Request& request) {
    if (request.index_on_connection == 0) return Reply{"HTTP/1.1 200 OK\r\nContent-Len"};
    return Reply{"gth: 2\r\n\r\nok"};
  });
  auto connection = Connect(*server);
  ASSERT_TRUE(connection->SendRaw("GET /1 HTTP/1.1\r\n\r\n").ok());
  ReceiveBuffer buffer;
  EXPECT_EQ(connection->ReadResponse(&buffer, 100).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(connection->connected());
  ASSERT_TRUE(connection->SendRaw("GET /2 HTTP/1.1\r\n\r\n").ok());
  absl::StatusOr<HttpResponse> response = connection->ReadResponse(&buffer, 5'000);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(Body(buffer, *response), "ok");
}

TEST(HttpConnectionTest, RawModeReturnsInterimAnswersAndLeavesTheCloseToTheCaller) {
  auto server = StartServer([](const Request&) {
    return Reply{"HTTP/1.1 100 Continue\r\n\r\n" +
                     TestHttpServer::Response(200, "done", "Connection: close\r\n"),
                 true};
  });
  auto connection = Connect(*server);
  ASSERT_TRUE(connection->SendRaw("GET / HTTP/1.1\r\n\r\n").ok());
  ReceiveBuffer buffer;
  absl::StatusOr<HttpResponse> interim = connection->ReadResponse(&buffer, 5'000);
  ASSERT_TRUE(interim.ok()) << interim.status();
  EXPECT_EQ(interim->head.status, 100);
  absl::StatusOr<HttpResponse> final_answer = connection->ReadResponse(&buffer, 5'000);
  ASSERT_TRUE(final_answer.ok()) << final_answer.status();
  EXPECT_EQ(final_answer->head.status, 200);
  EXPECT_TRUE(final_answer->head.close);
  EXPECT_TRUE(connection->WaitForClose(5'000));
}

TEST(HttpConnectionTest, WaitForCloseIsFalseWhileThePeerKeepsTheConnection) {
  auto server =
      StartServer([](const Request&) { return Reply{.bytes = "", .close = false, .hold = true}; });
  auto connection = Connect(*server);
  ASSERT_TRUE(connection->SendRaw("GET / HTTP/1.1\r\n\r\n").ok());
  EXPECT_FALSE(connection->WaitForClose(100));
}

TEST(TestHttpServerTest, ParsesTheRequestAndAnswersWithItsKeepAlive) {
  Request seen;
  auto server = StartServer([&seen](const Request& request) {
    seen = request;
    return TestHttpServer::Answer(request, 503, "application/json", "{}", {{"Retry-After", "3"}});
  });
  testing::TestClient client(server->port());
  ASSERT_TRUE(client.connected());
  client.Send(testing::PostRequest("/v1/traces?x=1", "body", "Connection: close\r\n"));
  std::optional<testing::ClientResponse> response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->header("retry-after"), "3");
  EXPECT_EQ(response->header("content-type"), "application/json");
  EXPECT_EQ(response->header("connection"), "close");
  EXPECT_EQ(response->body, "{}");
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/v1/traces?x=1");
  EXPECT_EQ(seen.Header("HOST"), "t");
  EXPECT_EQ(seen.body, "body");
  EXPECT_FALSE(seen.keep_alive());
}

TEST(TestHttpServerTest, AHandlerThatThrowsAnswers500) {
  auto server = StartServer([](const Request&) -> Reply { throw std::runtime_error("boom"); });
  testing::TestClient client(server->port());
  client.Send(testing::GetRequest("/"));
  std::optional<testing::ClientResponse> response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 500);
  EXPECT_EQ(response->body, "boom");
}

}  // namespace
}  // namespace brigade::net
