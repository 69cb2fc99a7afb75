#include "frontend/http/http_server.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/strings.h"
#include "frontend/http/test_handlers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "net/test_client.h"

namespace brigade::frontend {
namespace {

using net::testing::ClientResponse;
using net::testing::kWaitMs;
using net::testing::TestClient;
using testing::EchoHandler;
using ::testing::HasSubstr;
using testing::HoldingHandler;

std::string Get(std::string_view target, std::string_view extra_headers = "") {
  return net::testing::GetRequest(target, extra_headers);
}
std::string Post(std::string_view target, std::string_view body,
                 std::string_view extra_headers = "") {
  return net::testing::PostRequest(target, body, extra_headers);
}

HttpServer::Options TestOptions() {
  HttpServer::Options options;
  options.address = "127.0.0.1";
  options.port = 0;
  return options;
}

std::unique_ptr<HttpServer> Start(HttpHandler* handler,
                                  HttpServer::Options options = TestOptions()) {
  auto server = HttpServer::Create(std::move(options), handler);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

TEST(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  EchoHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  ASSERT_TRUE(client.connected());
  for (int i = 0; i < 3; ++i) {
    client.Send(Post(StrCat("/echo/", i, "?q=1"), StrCat("body", i)));
    auto response = client.Read();
    ASSERT_TRUE(response.has_value()) << i;
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, StrCat("POST /echo/", i, "?q=1 body", i));
    EXPECT_EQ(response->header("x-path"), StrCat("/echo/", i));
    EXPECT_EQ(response->header("connection"), "");
  }
  EXPECT_EQ(server->open_connections(), 1u);
}

TEST(HttpServerTest, PipelinedRequestsAreAnsweredInRequestOrder) {
  HoldingHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send(Get("/a") + Get("/b") + Get("/c"));
  std::vector<HoldingHandler::Held> held = handler.Take(3);
  ASSERT_EQ(held.size(), 3u);
  // Answer in reverse order, from another thread.
  std::thread answerer([&held] {
    for (int i = 2; i >= 0; --i) {
      held[i].responder->Send(HttpResponse::Json(200, std::string(held[i].request.target)));
    }
  });
  answerer.join();
  for (const char* expected : {"/a", "/b", "/c"}) {
    auto response = client.Read();
    ASSERT_TRUE(response.has_value()) << expected;
    EXPECT_EQ(response->body, expected);
  }
}

TEST(HttpServerTest, AsyncResponseFromAnotherThreadIsWritten) {
  HoldingHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send(Get("/later"));
  std::vector<HoldingHandler::Held> held = handler.Take(1);
  ASSERT_EQ(held.size(), 1u);
  std::thread worker([responder = std::move(*held[0].responder)]() mutable {
    responder.SendFrom([] { return HttpResponse::Json(201, R"({"made":"on the io thread"})"); });
  });
  worker.join();
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->header("content-type"), "application/json");
  EXPECT_EQ(response->body, R"({"made":"on the io thread"})");
}

TEST(HttpServerTest, BodyOverTheLimitGets413WithoutBeingRead) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_body_bytes = 1024;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  // Only the head is sent: the answer must not wait for the 1 MB body.
  client.Send("POST /big HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n");
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(response->header("connection"), "close");
  EXPECT_EQ(response->header("content-type"), "application/json");
  EXPECT_THAT(response->body, HasSubstr(R"({"error":"request body exceeds the limit of 1024)"));
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(handler.calls(), 0);
}

TEST(HttpServerTest, ChunkedBodyOverTheLimitGets413) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_body_bytes = 16;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  client.Send(
      "POST /big HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "10\r\n0123456789abcdef\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n");
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(handler.calls(), 0);
}

TEST(HttpServerTest, ChunkedBodyIsAssembled) {
  EchoHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send(
      "POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->body, "POST /c abcde");
}

TEST(HttpServerTest, BodyArrivingInPiecesIsReadWhole) {
  EchoHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  const std::string body(200000, 'x');
  const std::string request = Post("/p", body);
  for (size_t offset = 0; offset < request.size(); offset += 7000) {
    client.Send(std::string_view(request).substr(offset, 7000));
  }
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->body, "POST /p " + body);
}

// Asks for byte 5 of every body to be aligned and reports whether it was.
class AligningHandler : public HttpHandler {
 public:
  size_t AlignedBodyOffset(const HttpRequest& head) override {
    seen_header_ = head.Header("X-Test").value_or("");
    return 5;
  }
  void Handle(HttpRequest request, HttpResponder responder) override {
    const bool aligned = reinterpret_cast<uintptr_t>(request.body->data() + 5) %
                             protocol::http::BodyBuffer::kAlignment ==
                         0;
    responder.Send(HttpResponse::Json(
        200, StrCat(aligned ? "aligned " : "unaligned ", seen_header_, " ", request.body->view())));
  }

 private:
  std::string seen_header_;
};

TEST(HttpServerTest, BodyIsPlacedWhereTheHandlerWantsItAligned) {
  AligningHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send(Post("/a", "0123456789", "X-Test: head-seen\r\n"));
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->body, "aligned head-seen 0123456789");
}

TEST(HttpServerTest, MalformedRequestGets400AndClose) {
  EchoHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send("THIS IS NOT HTTP\r\n\r\n");
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 400);
  EXPECT_EQ(response->header("connection"), "close");
  EXPECT_THAT(response->body, HasSubstr("malformed HTTP request"));
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(handler.calls(), 0);
}

TEST(HttpServerTest, OversizedHeadGets431) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_header_bytes = 1024;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  client.Send(Get("/h", StrCat("X-Big: ", std::string(2000, 'y'), "\r\n")));
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 431);
  EXPECT_TRUE(client.WaitForClose());
}

TEST(HttpServerTest, ConnectionCloseIsHonoured) {
  EchoHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send(Get("/bye", "Connection: close\r\n"));
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->header("connection"), "close");
  EXPECT_TRUE(client.WaitForClose());
}

TEST(HttpServerTest, Http10ClosesUnlessKeepAliveIsAsked) {
  EchoHandler handler;
  auto server = Start(&handler);
  TestClient keep(server->port());
  keep.Send("GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  auto first = keep.Read();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->header("connection"), "keep-alive");
  keep.Send("GET /k2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_TRUE(keep.Read().has_value());

  TestClient once(server->port());
  once.Send("GET /o HTTP/1.0\r\n\r\n");
  auto response = once.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->header("connection"), "close");
  EXPECT_TRUE(once.WaitForClose());
}

TEST(HttpServerTest, ExpectContinueIsAnsweredBeforeTheBody) {
  EchoHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send("POST /e HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  auto interim = client.Read();
  ASSERT_TRUE(interim.has_value());
  EXPECT_EQ(interim->status, 100);
  client.Send("hello");
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->body, "POST /e hello");
}

TEST(HttpServerTest, HeadResponsesCarryNoBody) {
  EchoHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send("HEAD /h HTTP/1.1\r\nHost: t\r\n\r\n" + Get("/after"));
  auto head = client.Read();
  ASSERT_TRUE(head.has_value());
  // The head announces the length the GET body would have, but no body follows.
  EXPECT_EQ(head->header("content-length"), std::to_string(std::string("HEAD /h ").size()));
}

TEST(HttpServerTest, StampsArrivalAndReportsSentTime) {
  FakeClock clock(7'000'000);
  HoldingHandler handler;
  HttpServer::Options options = TestOptions();
  options.clock = &clock;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  client.Send(Get("/t"));
  std::vector<HoldingHandler::Held> held = handler.Take(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].request.arrival_ns, 7'000'000);
  clock.AdvanceNs(250);
  absl::Notification sent;
  SentInfo info;
  HttpResponse response = HttpResponse::Json(200, "{}");
  response.on_sent = [&sent, &info](const SentInfo& sent_info) {
    info = sent_info;
    sent.Notify();
  };
  held[0].responder->Send(std::move(response));
  ASSERT_TRUE(client.Read().has_value());
  ASSERT_TRUE(sent.WaitForNotificationWithTimeout(absl::Milliseconds(kWaitMs)));
  EXPECT_TRUE(info.ok);
  EXPECT_EQ(info.arrival_ns, 7'000'000);
  EXPECT_EQ(info.sent_ns, 7'000'250);
}

TEST(HttpServerTest, ClientDisconnectCancelsRequestsInFlight) {
  HoldingHandler handler;
  auto server = Start(&handler);
  auto client = std::make_unique<TestClient>(server->port());
  client->Send(Get("/slow") + Get("/slower"));
  std::vector<HoldingHandler::Held> held = handler.Take(2);
  ASSERT_EQ(held.size(), 2u);
  client.reset();  // the client goes away
  EXPECT_TRUE(handler.WaitForCancels(2));
  EXPECT_TRUE(held[0].cancelled->load());
  EXPECT_TRUE(held[1].cancelled->load());
  // Answering afterwards is harmless.
  held[0].responder->Send(HttpResponse::Json(200, "{}"));
}

TEST(HttpServerTest, UnansweredResponderAnswers500) {
  HoldingHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send(Get("/dropped"));
  std::vector<HoldingHandler::Held> held = handler.Take(1);
  ASSERT_EQ(held.size(), 1u);
  held[0].responder.reset();
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 500);
}

TEST(HttpServerTest, IdleConnectionsAreClosed) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.idle_timeout = absl::Milliseconds(100);
  auto server = Start(&handler, options);
  TestClient client(server->port());
  client.Send(Get("/once"));
  ASSERT_TRUE(client.Read().has_value());
  EXPECT_TRUE(client.WaitForClose());
}

TEST(HttpServerTest, IncompleteRequestTimesOutWith408) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.read_timeout = absl::Milliseconds(100);
  auto server = Start(&handler, options);
  TestClient client(server->port());
  client.Send("POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
  auto response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 408);
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(handler.calls(), 0);
}

TEST(HttpServerTest, ShutdownDrainsRequestsInFlightAndClosesIdleConnections) {
  HoldingHandler handler;
  auto server = Start(&handler);
  TestClient busy(server->port());
  TestClient idle(server->port());
  idle.Send(Get("/idle"));
  std::vector<HoldingHandler::Held> first = handler.Take(1);
  ASSERT_EQ(first.size(), 1u);
  first[0].responder->Send(HttpResponse::Json(200, "{}"));
  ASSERT_TRUE(idle.Read().has_value());
  busy.Send(Get("/busy"));
  std::vector<HoldingHandler::Held> held = handler.Take(1);
  ASSERT_EQ(held.size(), 1u);

  std::thread stopper([&server] { server->Shutdown(absl::Seconds(10)); });
  EXPECT_TRUE(idle.WaitForClose());  // idle: closed at once
  held[0].responder->Send(HttpResponse::Json(200, R"({"finished":true})"));
  auto response = busy.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->body, R"({"finished":true})");
  EXPECT_EQ(response->header("connection"), "close");
  EXPECT_TRUE(busy.WaitForClose());
  busy.Close();  // ends the server's lingering read at once
  stopper.join();
  EXPECT_FALSE(held[0].cancelled->load());
  EXPECT_EQ(server->open_connections(), 0u);
  // No longer accepting.
  TestClient late(server->port());
  EXPECT_FALSE(late.connected() && late.Read(200).has_value());
}

TEST(HttpServerTest, ShutdownCancelsWhatDoesNotFinishInTime) {
  HoldingHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send(Get("/never"));
  std::vector<HoldingHandler::Held> held = handler.Take(1);
  ASSERT_EQ(held.size(), 1u);
  server->Shutdown(absl::Milliseconds(50));
  EXPECT_TRUE(held[0].cancelled->load());
  EXPECT_TRUE(client.WaitForClose());
  // The late answer goes nowhere, safely.
  held[0].responder->Send(HttpResponse::Json(200, "{}"));
}

TEST(HttpServerTest, CreateRejectsBadOptionsAndBusyPorts) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.io_threads = 0;
  EXPECT_EQ(HttpServer::Create(options, &handler).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = TestOptions();
  options.address = "not-an-address";
  EXPECT_EQ(HttpServer::Create(options, &handler).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto first = Start(&handler);
  options = TestOptions();
  options.port = first->port();
  EXPECT_EQ(HttpServer::Create(options, &handler).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace brigade::frontend
