// HttpServer over TLS: the handshake, mutual TLS, a certificate rotation, and the transport's
// timeouts and shutdown with TLS underneath; Brigade's own HTTPS client (net::HttpConnection with
// a TlsClientContext) and a plain one as the peers, certificates made in memory (test_pki.h).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/strings.h"
#include "frontend/http/http_server.h"
#include "frontend/http/http_tls_context.h"
#include "frontend/http/test_handlers.h"
#include "frontend/tls/test_pki.h"
#include "frontend/tls/tls_credentials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "net/http_connection.h"
#include "net/test_client.h"
#include "net/tls_client_context.h"
#include "telemetry/counter.h"

namespace brigade::frontend {
namespace {

using net::testing::TestClient;
using testing::EchoHandler;
using ::testing::HasSubstr;
using testing::HoldingHandler;

class HttpServerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/brigade-http-tls-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    pki_ = tls::MakeTestPki();
    tls::WriteTestFile(Path("ca.pem"), pki_.ca_cert);
    tls::WriteTestFile(Path("client.pem"), pki_.client_cert);
    tls::WriteTestFile(Path("client.key"), pki_.client_key);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::ZeroDuration());
    std::filesystem::remove_all(dir_);
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  void Start(HttpHandler* handler, bool mutual = false,
             HttpServer::Options options = HttpServer::Options()) {
    absl::StatusOr<std::shared_ptr<HttpTlsContext>> context =
        HttpTlsContext::Create(tls::ServerCredentials(pki_), {.require_client_cert = mutual});
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = *context;
    options.address = "127.0.0.1";
    options.port = 0;
    options.tls = context_;
    options.tls_handshake_failures = &failures_;
    absl::StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Create(options, handler);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // An HTTPS connection trusting `ca_path`, presenting the client certificate if asked.
  std::unique_ptr<net::HttpConnection> Connect(bool client_cert = false,
                                               const std::string& ca_path = "") {
    absl::StatusOr<std::shared_ptr<const net::TlsClientContext>> tls =
        net::TlsClientContext::Create({.root_cert_path = ca_path.empty() ? Path("ca.pem") : ca_path,
                                       .client_cert_path = client_cert ? Path("client.pem") : "",
                                       .client_key_path = client_cert ? Path("client.key") : ""});
    EXPECT_TRUE(tls.ok()) << tls.status();
    absl::StatusOr<std::unique_ptr<net::HttpConnection>> connection = net::HttpConnection::Create(
        {.host = "127.0.0.1", .port = server_->port(), .timeout_ms = 5000, .tls = *tls});
    EXPECT_TRUE(connection.ok()) << connection.status();
    return *std::move(connection);
  }

  // GET `target`: the status and body, or the failure.
  absl::StatusOr<std::pair<int, std::string>> Get(net::HttpConnection* connection,
                                                  std::string_view target) {
    const std::string request = net::testing::GetRequest(target);
    const iovec part{const_cast<char*>(request.data()), request.size()};
    absl::StatusOr<net::HttpResponse> response =
        connection->RoundTrip(std::span<const iovec>(&part, 1), &buffer_);
    if (!response.ok()) return response.status();
    return std::pair{response->head.status, std::string(buffer_.view().substr(
                                                response->body_offset, response->body_bytes))};
  }

  std::string dir_;
  tls::TestPki pki_;
  std::shared_ptr<HttpTlsContext> context_;
  telemetry::Counter failures_;
  std::unique_ptr<HttpServer> server_;
  net::ReceiveBuffer buffer_;
};

TEST_F(HttpServerTlsTest, ServesKeepAliveRequestsOverTls) {
  EchoHandler handler;
  Start(&handler);
  std::unique_ptr<net::HttpConnection> connection = Connect();
  for (int i = 0; i < 3; ++i) {
    auto answer = Get(connection.get(), StrCat("/echo/", i));
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->first, 200);
    EXPECT_EQ(answer->second, StrCat("GET /echo/", i, " "));
  }
  EXPECT_EQ(server_->open_connections(), 1u);
  EXPECT_EQ(failures_.Value(), 0u);
}

TEST_F(HttpServerTlsTest, LargeBodiesAndPipelinedRequestsCrossTls) {
  EchoHandler handler;
  Start(&handler);
  std::unique_ptr<net::HttpConnection> connection = Connect();
  const std::string body(3 << 20, 'b');  // read straight into the body buffer, many records
  ASSERT_TRUE(
      connection
          ->SendRaw(net::testing::PostRequest("/big", body) + net::testing::GetRequest("/after"))
          .ok());
  absl::StatusOr<net::HttpResponse> first = connection->ReadResponse(&buffer_, 10'000);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->head.status, 200);
  EXPECT_EQ(first->body_bytes, body.size() + std::string("POST /big ").size());
  absl::StatusOr<net::HttpResponse> second = connection->ReadResponse(&buffer_, 10'000);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(buffer_.view().substr(second->body_offset), "GET /after ");
}

TEST_F(HttpServerTlsTest, APlainClientIsClosedWithoutAnAnswerAndCounted) {
  EchoHandler handler;
  Start(&handler);
  TestClient plain(server_->port());
  plain.Send(net::testing::GetRequest("/plain"));
  EXPECT_FALSE(plain.Read().has_value());
  EXPECT_EQ(handler.calls(), 0);
  for (int i = 0; i < 100 && failures_.Value() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(failures_.Value(), 1u);
}

TEST_F(HttpServerTlsTest, AServerCertificateFromAnUntrustedCaFailsTheClient) {
  EchoHandler handler;
  Start(&handler);
  const tls::TestPki other = tls::MakeTestPki();
  tls::WriteTestFile(Path("other-ca.pem"), other.ca_cert);
  std::unique_ptr<net::HttpConnection> connection = Connect(false, Path("other-ca.pem"));
  auto answer = Get(connection.get(), "/x");
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.status().message(), HasSubstr("certificate"));
}

TEST_F(HttpServerTlsTest, MutualTlsServesOnlyClientsWithACertificate) {
  EchoHandler handler;
  Start(&handler, /*mutual=*/true);
  std::unique_ptr<net::HttpConnection> with_cert = Connect(/*client_cert=*/true);
  auto answer = Get(with_cert.get(), "/mine");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->first, 200);

  std::unique_ptr<net::HttpConnection> without = Connect(/*client_cert=*/false);
  EXPECT_FALSE(Get(without.get(), "/yours").ok());
  EXPECT_EQ(handler.calls(), 1);
}

TEST_F(HttpServerTlsTest, ARotationServesNewConnectionsAndOldOnesKeepTheirs) {
  EchoHandler handler;
  Start(&handler);
  std::unique_ptr<net::HttpConnection> old_connection = Connect();
  ASSERT_TRUE(Get(old_connection.get(), "/before").ok());

  const tls::TestPki next = tls::MakeTestPki();
  ASSERT_TRUE(context_->Update(tls::ServerCredentials(next)).ok());
  tls::WriteTestFile(Path("next-ca.pem"), next.ca_cert);

  // New connections get the new certificate: only the new CA verifies it.
  std::unique_ptr<net::HttpConnection> fresh = Connect(false, Path("next-ca.pem"));
  auto answer = Get(fresh.get(), "/after");
  ASSERT_TRUE(answer.ok()) << answer.status();
  std::unique_ptr<net::HttpConnection> stale_trust = Connect();
  EXPECT_FALSE(Get(stale_trust.get(), "/after").ok());
  // The connection made before the rotation carries on.
  auto kept = Get(old_connection.get(), "/still");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->first, 200);
}

TEST_F(HttpServerTlsTest, AnUnusableCertificateLeavesTheContextInForce) {
  EchoHandler handler;
  Start(&handler);
  tls::TlsCredentials broken = tls::ServerCredentials(pki_);
  broken.private_key_pem = pki_.client_key;  // not the certificate's
  EXPECT_FALSE(context_->Update(broken).ok());
  std::unique_ptr<net::HttpConnection> connection = Connect();
  EXPECT_TRUE(Get(connection.get(), "/x").ok());
}

TEST_F(HttpServerTlsTest, AClientThatNeverHandshakesIsClosedAfterTheHeaderTimeout) {
  EchoHandler handler;
  HttpServer::Options options;
  options.header_timeout = absl::Milliseconds(200);
  Start(&handler, false, options);
  TestClient silent(server_->port());
  ASSERT_TRUE(silent.connected());
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.WaitForClose(5000));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(3));
  EXPECT_EQ(failures_.Value(), 1u);
}

TEST_F(HttpServerTlsTest, ShutdownAnswersARequestInFlightWithConnectionClose) {
  HoldingHandler handler;
  Start(&handler);
  std::unique_ptr<net::HttpConnection> connection = Connect();
  ASSERT_TRUE(connection->SendRaw(net::testing::GetRequest("/slow")).ok());
  std::vector<HoldingHandler::Held> held = handler.Take(1);
  ASSERT_EQ(held.size(), 1u);
  std::thread stopper([this] { server_->Shutdown(absl::Seconds(5)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  held[0].responder->Send(HttpResponse::Json(200, "{}"));
  absl::StatusOr<net::HttpResponse> response = connection->ReadResponse(&buffer_, 5000);
  stopper.join();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->head.status, 200);
  EXPECT_TRUE(response->head.close);
  EXPECT_TRUE(connection->WaitForClose(5000));
  server_.reset();
}

// A TLS client driven by hand over a blocking socket, through memory BIOs, so that a test can
// hold back its last handshake flight (TLS 1.3: the client's Finished) and send it together with
// its first request, as real clients do.
class ManualTlsClient {
 public:
  explicit ManualTlsClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    const timeval timeout{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    context_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(context_, TLS1_3_VERSION);
    SSL_CTX_set_verify(context_, SSL_VERIFY_NONE, nullptr);  // the server is not on trial here
    ssl_ = SSL_new(context_);
    BIO* in = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    in_ = in;
    SSL_set_bio(ssl_, in, out_);
    SSL_set_connect_state(ssl_);
  }
  ~ManualTlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(context_);
    Close();
  }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  // Runs the handshake up to the client's last flight, which stays unsent.
  bool HandshakeHoldingTheLastFlight() {
    if (!connected_) return false;
    for (;;) {
      const int done = SSL_do_handshake(ssl_);
      if (done == 1) return true;
      if (SSL_get_error(ssl_, done) != SSL_ERROR_WANT_READ || !Flush() || !Receive()) return false;
    }
  }

  // Writes `request` behind whatever is held and sends it all in one write.
  bool Send(const std::string& request) {
    return SSL_write(ssl_, request.data(), static_cast<int>(request.size())) > 0 && Flush();
  }

  // Plain text up to the end of a response head (or what came before the server closed, or 5 s
  // passed).
  std::string ReadHead() {
    std::string text;
    char chunk[4096];
    while (text.find("\r\n\r\n") == std::string::npos) {
      int n;
      while ((n = SSL_read(ssl_, chunk, sizeof(chunk))) > 0) text.append(chunk, n);
      if (text.find("\r\n\r\n") == std::string::npos && !Receive()) break;
    }
    return text;
  }

 private:
  bool Flush() {
    char chunk[4096];
    std::string bytes;
    int n;
    while ((n = BIO_read(out_, chunk, sizeof(chunk))) > 0) bytes.append(chunk, n);
    return bytes.empty() || send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
                                static_cast<ssize_t>(bytes.size());
  }
  bool Receive() {
    char chunk[16384];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    BIO_write(in_, chunk, static_cast<int>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
};

// D5 over TLS: a connection still handshaking when the drain began used to be closed at once,
// but a TLS 1.3 client sends its first request right behind its last handshake message, before it
// could know of the drain: the handshake is finished and that request answered, last.
TEST_F(HttpServerTlsTest, ARequestRidingBehindTheHandshakeAsTheDrainBeginsIsAnswered) {
  EchoHandler handler;
  Start(&handler);
  ManualTlsClient late(server_->port());
  ASSERT_TRUE(late.HandshakeHoldingTheLastFlight());
  std::unique_ptr<net::HttpConnection> idle = Connect();  // closes when the drain begins
  ASSERT_TRUE(idle->Open().ok());
  std::thread stopper([this] { server_->Shutdown(absl::Seconds(10)); });
  EXPECT_TRUE(idle->WaitForClose(5000));
  ASSERT_TRUE(late.Send(net::testing::GetRequest("/late")));
  const std::string answer = late.ReadHead();
  late.Close();  // the server lingers on a connection it closed until the client closes too
  stopper.join();
  EXPECT_THAT(answer, ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(answer, HasSubstr("Connection: close"));
  server_.reset();
}

TEST_F(HttpServerTlsTest, ConnectionsOverTheLimitAreToldSoOverTls) {
  EchoHandler handler;
  HttpServer::Options options;
  options.max_connections = 1;
  Start(&handler, false, options);
  std::unique_ptr<net::HttpConnection> first = Connect();
  ASSERT_TRUE(Get(first.get(), "/one").ok());
  std::unique_ptr<net::HttpConnection> second = Connect();
  auto refused = Get(second.get(), "/two");
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->first, 503);
}

}  // namespace
}  // namespace brigade::frontend
