#ifndef BRIGADE_TOOLS_CLIENT_HTTP_CLIENT_H_
#define BRIGADE_TOOLS_CLIENT_HTTP_CLIENT_H_

// HttpClient: the KServe v2 REST API (with Triton's binary tensor extension, statistics and
// repository extensions) over one keep-alive HTTP/1.1 connection. See client.h for the contract
// shared with the gRPC client.
//
// Cost per Infer in the steady state: the request JSON is written into a reused string, the head
// into another, and both go out with the input tensors' bytes in one sendmsg() (binary inputs
// are not copied); the response is received into a reused buffer and parsed in place by a reused
// simdjson parser. Output tensors sent as binary are views into that buffer (see Client::Infer),
// unless their bytes there are misaligned for their element type; JSON outputs are copied into
// new tensors.
//
// Thread safety: none (one thread at a time). Ownership: owns its connection and buffers.

#include <sys/uio.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "net/http_connection.h"
#include "net/receive_buffer.h"
#include "tools/client/client.h"

namespace simdjson::dom {
class parser;
}

namespace brigade::client {

struct HostPort {
  std::string host;
  int port = 0;
  bool https = false;  // the address said "https://"
};

// Parses "host:port", "[v6]:port" or "host" (then `default_port`) with an optional "http://" or
// "https://" scheme and trailing "/". INVALID_ARGUMENT for a path or a bad port.
absl::StatusOr<HostPort> ParseHostPort(std::string_view address, int default_port);

class HttpClient final : public Client {
 public:
  static absl::StatusOr<std::unique_ptr<HttpClient>> Create(const ClientOptions& options);
  ~HttpClient() override;

  ClientProtocol protocol() const override { return ClientProtocol::kHttp; }

  absl::StatusOr<bool> ServerLive() override;
  absl::StatusOr<bool> ServerReady() override;
  absl::StatusOr<bool> ModelReady(std::string_view model, std::string_view version) override;
  absl::StatusOr<protocol::ServerMetadata> GetServerMetadata() override;
  absl::StatusOr<protocol::ModelMetadata> GetModelMetadata(std::string_view model,
                                                           std::string_view version) override;
  absl::StatusOr<config::ModelConfig> GetModelConfig(std::string_view model,
                                                     std::string_view version) override;
  absl::Status Infer(const InferSpec& request, InferResponse* response) override;
  absl::StatusOr<std::vector<protocol::ModelStatistics>> GetModelStatistics(
      std::string_view model, std::string_view version) override;
  absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> RepositoryIndex(
      bool ready_only) override;
  absl::Status LoadModel(std::string_view model, std::string_view config_json) override;
  absl::Status UnloadModel(std::string_view model) override;
  absl::Status RegisterSystemSharedMemory(const protocol::SharedMemoryRegion& region) override;
  absl::Status UnregisterSystemSharedMemory(std::string_view name) override;

  // Use Create(); the key keeps construction inside this class while allowing make_unique.
  class Key {
    friend class HttpClient;
    Key() = default;
  };
  HttpClient(Key, std::unique_ptr<net::HttpConnection> connection);

 private:
  // Starts request_head_ with "<method> <path>" where the path is written by the caller next.
  void BeginHead(std::string_view method);
  // Finishes the head (Host, Authorization, Content-Type, Content-Length, optional extra header
  // line).
  void EndHead(std::string_view content_type, size_t content_length, size_t inference_header);
  // Sends head + `body_parts`; answers the response, with the buffer ready for decoding.
  absl::StatusOr<net::HttpResponse> Send(std::span<const iovec> body_parts);
  // GET/POST of a small request whose answer must be 200; the body view is valid until the next
  // call.
  absl::StatusOr<std::string_view> Exchange(std::string_view body);
  // 200 → true, 400/503 → false, other → error (health and readiness).
  absl::StatusOr<bool> Probe();
  absl::Status ErrorFrom(const net::HttpResponse& response);
  std::string_view BodyOf(const net::HttpResponse& response) const;

  std::unique_ptr<net::HttpConnection> connection_;
  std::unique_ptr<simdjson::dom::parser> parser_;
  std::shared_ptr<net::ReceiveBuffer> receive_;
  // Reused across requests.
  std::string request_head_;
  // "\r\nAuthorization: Bearer <token>", or empty.
  std::string authorization_;
  std::string json_;
  std::vector<std::span<const std::byte>> binary_parts_;
  std::vector<iovec> body_iov_;
  std::vector<iovec> iov_;
};

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_HTTP_CLIENT_H_
