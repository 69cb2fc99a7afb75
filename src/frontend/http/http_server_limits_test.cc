// HttpServer's limits against hostile clients, over real loopback sockets: what a connection may
// make the server hold (unparsed bytes, header fields, pipelined requests), how long it may take
// to send a head, how many connections may be open, and what shutdown does with requests that
// are still arriving or still unanswered.

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "core/memory_budget.h"
#include "core/strings.h"
#include "frontend/http/http_server.h"
#include "frontend/http/test_handlers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "net/test_client.h"
#include "telemetry/counter.h"

namespace brigade::frontend {
namespace {

using net::testing::GetRequest;
using net::testing::kWaitMs;
using net::testing::TestClient;
using testing::EchoHandler;
using ::testing::HasSubstr;
using testing::HoldingHandler;

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

// A field of /proc/self/status in KiB ("VmHWM", "VmRSS"); -1 when unreadable.
int64_t ProcStatusKib(const char* field) {
  std::FILE* file = std::fopen("/proc/self/status", "r");
  if (file == nullptr) return -1;
  char line[256];
  int64_t kib = -1;
  const size_t length = std::strlen(field);
  while (std::fgets(line, sizeof(line), file) != nullptr) {
    if (std::strncmp(line, field, length) == 0 && line[length] == ':') {
      kib = std::strtoll(line + length + 1, nullptr, 10);
      break;
    }
  }
  std::fclose(file);
  return kib;
}

// Resets VmHWM to the current RSS, so that a later VmHWM is the peak since now.
bool ResetPeakRss() {
  std::FILE* file = std::fopen("/proc/self/clear_refs", "w");
  if (file == nullptr) return false;
  const bool ok = std::fputs("5", file) >= 0;
  return std::fclose(file) == 0 && ok;
}

constexpr std::string_view kChunkedHead =
    "POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";

// Sends `head`, then `total_bytes` of `fill` in 1 MiB writes, from its own thread (the test's
// thread reads the answer). Send errors are ignored: the server may close first.
std::thread Flood(TestClient* client, std::string head, size_t total_bytes, char fill) {
  return std::thread([client, head = std::move(head), total_bytes, fill] {
    client->Send(head);
    const std::string piece(size_t{1} << 20, fill);
    for (size_t sent = 0; sent < total_bytes; sent += piece.size()) client->Send(piece);
  });
}

// D1: a chunk extension that never ends used to be buffered until the read timeout (30 s), the
// buffer growing with every byte: 1 GiB sent cost 1.1 GB of RSS.
TEST(HttpServerLimitsTest, EndlessChunkExtensionGets431AndHoldsAtMostTheHeadLimit) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_header_bytes = 1024;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  ASSERT_TRUE(client.connected());
  constexpr size_t kFloodBytes = size_t{64} << 20;
  const bool peak_measured = ResetPeakRss();
  const int64_t before_kib = ProcStatusKib("VmRSS");
  std::thread flood = Flood(&client, StrCat(kChunkedHead, "10;e="), kFloodBytes, 'a');
  std::optional<net::testing::ClientResponse> response = client.Read();
  flood.join();
  // The server kept at most the head limit plus one read of the 64 MiB; allow the allocator and
  // the test's own buffers 16 MiB of slack, far below what buffering the flood would take.
  const int64_t after_kib = ProcStatusKib(peak_measured ? "VmHWM" : "VmRSS");
  ASSERT_GT(before_kib, 0);
  EXPECT_LT(after_kib - before_kib, 16 * 1024)
      << (peak_measured ? "peak" : "current") << " RSS grew from " << before_kib << " KiB to "
      << after_kib << " KiB";
  ASSERT_TRUE(response.has_value()) << "no answer while the extension kept coming";
  EXPECT_EQ(response->status, 431);
  EXPECT_EQ(response->header("connection"), "close");
  EXPECT_THAT(response->body, HasSubstr("chunk-size line or trailer exceeds the limit of 1024"));
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(handler.calls(), 0);
}

TEST(HttpServerLimitsTest, EndlessTrailerGets431) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_header_bytes = 1024;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  std::thread flood =
      Flood(&client, StrCat(kChunkedHead, "3\r\nabc\r\n0\r\nX-Trailer: "), size_t{4} << 20, 'b');
  std::optional<net::testing::ClientResponse> response = client.Read();
  flood.join();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 431);
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(handler.calls(), 0);
}

TEST(HttpServerLimitsTest, ChunkExtensionsWithinTheLimitAreAccepted) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_header_bytes = 1024;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  client.Send(StrCat(kChunkedHead, "3;name=", std::string(500, 'v'), "\r\nabc\r\n0\r\n\r\n"));
  std::optional<net::testing::ClientResponse> response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "POST /c abc");
}

TEST(HttpServerLimitsTest, MoreHeaderFieldsThanTheLimitGet431) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_header_count = 10;
  auto server = Start(&handler, options);
  std::string nine;
  for (int i = 0; i < 9; ++i) nine += StrCat("X-", i, ": v\r\n");
  TestClient within(server->port());
  within.Send(GetRequest("/ten", nine));  // Host + 9
  std::optional<net::testing::ClientResponse> ok = within.Read();
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status, 200);

  TestClient over(server->port());
  over.Send(GetRequest("/eleven", nine + "X-9: v\r\n"));
  std::optional<net::testing::ClientResponse> refused = over.Read();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 431);
  EXPECT_THAT(refused->body, HasSubstr("11 header fields, over the limit of 10"));
  EXPECT_TRUE(over.WaitForClose());
  EXPECT_EQ(handler.calls(), 1);
}

TEST(HttpServerLimitsTest, RequestLineOverTheLimitGets414) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_request_line_bytes = 256;
  auto server = Start(&handler, options);
  TestClient within(server->port());
  within.Send(GetRequest(StrCat("/", std::string(200, 'p'))));
  std::optional<net::testing::ClientResponse> ok = within.Read();
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status, 200);

  TestClient over(server->port());
  over.Send(GetRequest(StrCat("/", std::string(300, 'p'))));
  std::optional<net::testing::ClientResponse> refused = over.Read();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 414);
  EXPECT_TRUE(over.WaitForClose());
  EXPECT_EQ(handler.calls(), 1);
}

// Slowloris: one byte of the head at a time keeps the connection busy; the head must be complete
// `header_timeout` after its first byte even though the whole-request timeout is far away.
TEST(HttpServerLimitsTest, HeadTrickledByteByByteIsCutAtTheHeaderTimeout) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.header_timeout = absl::Milliseconds(300);
  options.read_timeout = absl::Seconds(60);
  auto server = Start(&handler, options);
  TestClient client(server->port());
  const std::string head = GetRequest("/slow", StrCat("X-Pad: ", std::string(400, 'z'), "\r\n"));
  const absl::Time first_byte = absl::Now();
  std::optional<net::testing::ClientResponse> response;
  for (size_t i = 0; i + 1 < head.size() && !response.has_value(); ++i) {
    client.Send(head.substr(i, 1));
    response = client.Read(/*timeout_ms=*/20);
  }
  const absl::Duration took = absl::Now() - first_byte;
  ASSERT_TRUE(response.has_value()) << "the trickled head was never cut";
  EXPECT_EQ(response->status, 408);
  EXPECT_THAT(response->body, HasSubstr("request head not received within 300 ms"));
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(handler.calls(), 0);
}

TEST(HttpServerLimitsTest, NoMoreThanMaxPipelinedRequestsAreParsedAhead) {
  HoldingHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_pipelined_requests = 2;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  client.Send(GetRequest("/1") + GetRequest("/2") + GetRequest("/3") + GetRequest("/4"));
  std::vector<HoldingHandler::Held> first = handler.Take(2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_TRUE(handler.Take(1, /*timeout_ms=*/200).empty()) << "a third request was parsed";
  first[0].responder->Send(HttpResponse::Json(200, "{}"));
  ASSERT_TRUE(client.Read().has_value());
  std::vector<HoldingHandler::Held> third = handler.Take(1);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].request.target, "/3");
  EXPECT_TRUE(handler.Take(1, /*timeout_ms=*/200).empty()) << "a fourth request was parsed";
}

std::string PostRequest(std::string_view target, const std::string& body) {
  return StrCat("POST ", target, " HTTP/1.1\r\nHost: t\r\nContent-Length: ", body.size(),
                "\r\n\r\n", body);
}

// The next answer on `client` is a 503 telling it to retry in a second, whose body says
// `fragment`, and the server then closes the connection.
void ExpectRetryLaterThenClose(TestClient* client, std::string_view fragment) {
  std::optional<net::testing::ClientResponse> refused = client->Read();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->header("retry-after"), "1");
  EXPECT_EQ(refused->header("connection"), "close");
  EXPECT_THAT(refused->body, HasSubstr(std::string(fragment)));
  EXPECT_TRUE(client->WaitForClose());
}

TEST(HttpServerLimitsTest, ABodyPastTheMemoryBudgetGets503UntilHeldBodiesAreReleased) {
  HoldingHandler handler;
  MemoryBudget budget(10000);
  telemetry::Counter refusals;
  HttpServer::Options options = TestOptions();
  options.memory_budget = &budget;
  options.memory_budget_refusals = &refusals;
  auto server = Start(&handler, options);

  TestClient first(server->port());
  first.Send(PostRequest("/a", std::string(6000, 'a')));
  std::vector<HoldingHandler::Held> held = handler.Take(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(budget.in_use(), 6000u);

  TestClient second(server->port());
  second.Send(PostRequest("/b", std::string(6000, 'b')));
  ExpectRetryLaterThenClose(&second, "limit of request memory (10000 bytes");
  EXPECT_EQ(refusals.Value(), 1u);

  // The held request is answered and dropped: its body's bytes go back, and a third fits.
  held[0].responder->Send(HttpResponse::Json(200, "{}"));
  ASSERT_TRUE(first.Read().has_value());
  held.clear();
  EXPECT_EQ(budget.in_use(), 0u);
  TestClient third(server->port());
  third.Send(PostRequest("/c", std::string(6000, 'c')));
  std::vector<HoldingHandler::Held> admitted = handler.Take(1);
  ASSERT_EQ(admitted.size(), 1u);
  EXPECT_EQ(admitted[0].request.body->size(), 6000u);
  admitted[0].responder->Send(HttpResponse::Json(200, "{}"));
  ASSERT_TRUE(third.Read().has_value());
}

TEST(HttpServerLimitsTest, AChunkedBodyGrowingPastTheMemoryBudgetGets503) {
  EchoHandler handler;
  MemoryBudget budget(16 * 1024);
  HttpServer::Options options = TestOptions();
  options.memory_budget = &budget;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  std::string chunks(kChunkedHead);
  const std::string piece(4000, 'x');
  for (int i = 0; i < 8; ++i) chunks += StrCat("fa0\r\n", piece, "\r\n");  // 0xfa0 = 4000
  client.Send(StrCat(chunks, "0\r\n\r\n"));
  std::optional<net::testing::ClientResponse> response = client.Read();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 503);
  EXPECT_THAT(response->body, HasSubstr("limit of request memory"));
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(handler.calls(), 0);
  server.reset();
  EXPECT_EQ(budget.in_use(), 0u);
}

TEST(HttpServerLimitsTest, BodiesWithinTheMemoryBudgetAreServedAndReturnTheirBytes) {
  EchoHandler handler;
  MemoryBudget budget(16 * 1024);
  HttpServer::Options options = TestOptions();
  options.memory_budget = &budget;
  auto server = Start(&handler, options);
  TestClient client(server->port());
  for (int i = 0; i < 20; ++i) {
    client.Send(PostRequest("/e", std::string(10000, 'e')));
    std::optional<net::testing::ClientResponse> response = client.Read();
    ASSERT_TRUE(response.has_value());
    ASSERT_EQ(response->status, 200) << "request " << i;
  }
  client.Send(StrCat(kChunkedHead, "3\r\nabc\r\n0\r\n\r\n"));
  std::optional<net::testing::ClientResponse> chunked = client.Read();
  ASSERT_TRUE(chunked.has_value());
  EXPECT_EQ(chunked->body, "POST /c abc");
  server.reset();
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(budget.refusals(), 0u);
}

// Polls (the count changes on io threads) until `server` has `count` connections open.
bool WaitForOpenConnections(const HttpServer& server, size_t count) {
  const absl::Time deadline = absl::Now() + absl::Milliseconds(kWaitMs);
  while (server.open_connections() != count) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

TEST(HttpServerLimitsTest, ConnectionsOverTheLimitGet503AndAreCounted) {
  EchoHandler handler;
  telemetry::Counter refused;
  HttpServer::Options options = TestOptions();
  options.max_connections = 2;
  options.refused_connections = &refused;
  auto server = Start(&handler, options);
  auto first = std::make_unique<TestClient>(server->port());
  TestClient second(server->port());
  for (TestClient* client : {first.get(), &second}) {
    client->Send(GetRequest("/in"));
    std::optional<net::testing::ClientResponse> response = client->Read();
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status, 200);
  }
  TestClient third(server->port());
  ExpectRetryLaterThenClose(&third, "2 connections open, its limit");
  EXPECT_EQ(refused.Value(), 1u);
  EXPECT_EQ(server->open_connections(), 2u);

  first.reset();  // frees a place
  ASSERT_TRUE(WaitForOpenConnections(*server, 1));
  TestClient fourth(server->port());
  fourth.Send(GetRequest("/again"));
  std::optional<net::testing::ClientResponse> admitted = fourth.Read();
  ASSERT_TRUE(admitted.has_value());
  EXPECT_EQ(admitted->status, 200);
  EXPECT_EQ(refused.Value(), 1u);
}

TEST(HttpServerLimitsTest, CreateRejectsBadLimits) {
  EchoHandler handler;
  HttpServer::Options options = TestOptions();
  options.max_connections = -1;
  EXPECT_EQ(HttpServer::Create(options, &handler).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = TestOptions();
  options.max_header_count = 0;
  EXPECT_EQ(HttpServer::Create(options, &handler).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = TestOptions();
  options.header_timeout = absl::ZeroDuration();
  EXPECT_EQ(HttpServer::Create(options, &handler).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = TestOptions();
  options.backlog = 0;
  EXPECT_EQ(HttpServer::Create(options, &handler).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// D5: a request whose head was partly read when the drain began used to be dropped with its
// connection; it was sent before the client could know, so it is read and answered, last.
TEST(HttpServerLimitsTest, DrainAnswersTheRequestStillArriving) {
  HoldingHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  TestClient idle(server->port());  // closes when the drain begins: the test's signal
  client.Send(GetRequest("/first"));
  std::vector<HoldingHandler::Held> first = handler.Take(1);
  ASSERT_EQ(first.size(), 1u);
  const std::string second = GetRequest("/second");
  client.Send(second.substr(0, 10));
  // Let the partial head reach the server before the drain begins.
  ASSERT_TRUE(handler.Take(1, /*timeout_ms=*/100).empty());
  ASSERT_TRUE(WaitForOpenConnections(*server, 2));
  size_t cut = 0;
  std::thread stopper([&server, &cut] { cut = server->Shutdown(absl::Seconds(10)); });
  ASSERT_TRUE(idle.WaitForClose());
  first[0].responder->Send(HttpResponse::Json(200, R"({"n":1})"));
  std::optional<net::testing::ClientResponse> one = client.Read();
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->body, R"({"n":1})");
  EXPECT_EQ(one->header("connection"), "");
  client.Send(second.substr(10));
  std::vector<HoldingHandler::Held> late = handler.Take(1);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].request.target, "/second");
  late[0].responder->Send(HttpResponse::Json(200, R"({"n":2})"));
  std::optional<net::testing::ClientResponse> two = client.Read();
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->body, R"({"n":2})");
  EXPECT_EQ(two->header("connection"), "close");
  EXPECT_TRUE(client.WaitForClose());
  client.Close();
  stopper.join();
  EXPECT_EQ(cut, 0u);
}

// Connections whose requests were sent as the drain began (still in the listen queue, or
// accepted but not yet started) are answered, not reset: their clients could not have known.
TEST(HttpServerLimitsTest, RequestsOnConnectionsMadeAsTheDrainBeginsAreAnswered) {
  EchoHandler handler;
  constexpr int kRounds = 10;
  constexpr int kClients = 16;
  int answered = 0;
  for (int round = 0; round < kRounds; ++round) {
    auto server = Start(&handler);
    ASSERT_NE(server, nullptr);
    std::vector<std::unique_ptr<TestClient>> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.push_back(std::make_unique<TestClient>(server->port()));
      clients.back()->Send(GetRequest("/late"));
    }
    std::thread stopper([&server] { server->Shutdown(absl::Seconds(10)); });
    for (std::unique_ptr<TestClient>& client : clients) {
      std::optional<net::testing::ClientResponse> response = client->Read();
      if (response.has_value() && response->status == 200) ++answered;
      client->Close();  // the server lingers on a closed connection until its client closes
    }
    stopper.join();
  }
  EXPECT_EQ(answered, kRounds * kClients);
}

// D6: requests still unanswered at the drain deadline are answered 503 (not dropped) and
// counted, so the caller can report them.
TEST(HttpServerLimitsTest, ShutdownAnswers503AndCountsWhatTheDeadlineCuts) {
  HoldingHandler handler;
  auto server = Start(&handler);
  TestClient client(server->port());
  client.Send(GetRequest("/a") + GetRequest("/b"));
  std::vector<HoldingHandler::Held> held = handler.Take(2);
  ASSERT_EQ(held.size(), 2u);
  held[0].responder->Send(HttpResponse::Json(200, R"({"done":true})"));
  ASSERT_TRUE(client.Read().has_value());
  EXPECT_EQ(server->Shutdown(absl::Milliseconds(50)), 1u);
  std::optional<net::testing::ClientResponse> cut = client.Read();
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->status, 503);
  EXPECT_EQ(cut->header("connection"), "close");
  EXPECT_THAT(cut->body, HasSubstr("shutting down"));
  EXPECT_TRUE(held[1].cancelled->load());
  EXPECT_FALSE(held[0].cancelled->load());
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(server->Shutdown(absl::ZeroDuration()), 0u);
}

}  // namespace
}  // namespace brigade::frontend
