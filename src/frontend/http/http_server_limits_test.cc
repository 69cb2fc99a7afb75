// HttpServer's limits against hostile clients, over real loopback sockets: what a connection may
// make the server hold.

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "core/strings.h"
#include "frontend/http/http_server.h"
#include "frontend/http/test_handlers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "net/test_client.h"

namespace brigade::frontend {
namespace {

using net::testing::TestClient;
using testing::EchoHandler;
using ::testing::HasSubstr;

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

}  // namespace
}  // namespace brigade::frontend
