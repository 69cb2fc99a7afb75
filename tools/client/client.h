#ifndef BRIGADE_TOOLS_CLIENT_CLIENT_H_
#define BRIGADE_TOOLS_CLIENT_CLIENT_H_

// Client: a blocking client for any KServe v2 / Open Inference Protocol server (Brigade, Triton,
// KServe runtimes), over HTTP/1.1 (JSON, or Triton's binary tensor extension) or gRPC.
//
//   auto client = client::Client::Create({.protocol = ClientProtocol::kHttp,
//                                          .address = "localhost:8000"});
//   InferResponse response;
//   absl::Status status = (*client)->Infer(spec, &response);
//
// One Client is one connection: HTTP keeps one keep-alive TCP connection (TCP_NODELAY), opened on
// the first call and reopened when the server closes it; gRPC owns one channel with its own
// subchannel, so two Clients never share a connection. A Client is cheap to create: a load
// generator makes one per worker.
//
// Thread safety: none. A Client is used by one thread at a time (it reuses its encode and
// receive buffers across calls, which is what makes a request cost no allocation in the steady
// state). Distinct Clients may be used from distinct threads.
//
// Failure: every call returns the server's refusal as described in tools/client/client_status.h
// (code, server's message, HTTP status / gRPC code as payload); transport failures are UNAVAILABLE,
// timeouts DEADLINE_EXCEEDED, unparsable answers INTERNAL. Nothing throws.
//
// Health calls answer false (not an error) when the server says "not live/ready" by status
// (HTTP 400 or 503, as Triton and KServe do).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/infer_response.h"
#include "protocol/model_config.pb.h"
#include "protocol/shared_memory.h"
#include "tools/client/client_types.h"

namespace brigade::client {

enum class ClientProtocol { kHttp, kGrpc };

// "http" / "grpc".
std::string_view ClientProtocolName(ClientProtocol protocol);

struct ClientOptions {
  ClientProtocol protocol = ClientProtocol::kHttp;
  // "host:port", optionally with an "http://" scheme (HTTP) or as a gRPC target ("dns:///h:p").
  // IPv6 literals in brackets: "[::1]:8000".
  std::string address = "localhost:8000";
  // Limit for each call, from send to the last byte received; 0 = none. A call that exceeds it
  // fails with DEADLINE_EXCEEDED (and HTTP reconnects for the next one).
  int64_t timeout_ms = 60'000;
  // Largest response accepted (HTTP body / gRPC message); larger ones fail RESOURCE_EXHAUSTED.
  int64_t max_response_bytes = int64_t{1} << 30;
  // Sent with every call as `Authorization: Bearer <token>` (HTTP header, gRPC metadata); empty:
  // none. Printable ASCII without spaces (else Create is INVALID_ARGUMENT). bearer_token.h reads
  // one from a file or BRIGADE_TOKEN.
  std::string bearer_token{};
  // TLS (HTTPS, gRPC over TLS), also on for an "https://" address. The server's certificate is
  // verified against `root_cert_path` (empty: the system's roots) and must name the host;
  // `client_cert_path` and `client_key_path` (PEM) answer a server that asks for mutual TLS. A
  // file that cannot be read is INVALID_ARGUMENT from Create.
  struct Tls {
    bool enabled = false;
    std::string root_cert_path{};
    std::string client_cert_path{};
    std::string client_key_path{};
  };
  Tls tls{};
};

class Client {
 public:
  // Resolves the address (a name that does not resolve is INVALID_ARGUMENT); does not connect.
  static absl::StatusOr<std::unique_ptr<Client>> Create(const ClientOptions& options);

  virtual ~Client() = default;

  virtual ClientProtocol protocol() const = 0;

  virtual absl::StatusOr<bool> ServerLive() = 0;
  virtual absl::StatusOr<bool> ServerReady() = 0;
  // `version` empty: the version the server's policy serves.
  virtual absl::StatusOr<bool> ModelReady(std::string_view model, std::string_view version) = 0;

  virtual absl::StatusOr<protocol::ServerMetadata> GetServerMetadata() = 0;
  virtual absl::StatusOr<protocol::ModelMetadata> GetModelMetadata(std::string_view model,
                                                                   std::string_view version) = 0;

  // Model configuration extension: the configuration the server serves the model with
  // (GET /v2/models/{m}[/versions/{v}]/config, or the ModelConfig RPC). An HTTP answer that does
  // not decode as a ModelConfig is INTERNAL.
  virtual absl::StatusOr<config::ModelConfig> GetModelConfig(std::string_view model,
                                                             std::string_view version) = 0;

  // Runs one inference. `response` is overwritten (its old outputs are released first). Output
  // tensors that arrived as raw bytes (HTTP binary, gRPC raw contents) are views into the
  // received message and keep it alive (copies, where their bytes do not start aligned to their
  // element size); while the caller holds them the next call receives into a fresh buffer
  // instead of reusing that one.
  virtual absl::Status Infer(const InferSpec& request, InferResponse* response) = 0;

  // Statistics extension: `model` empty = every model; `version` empty = every version.
  virtual absl::StatusOr<std::vector<protocol::ModelStatistics>> GetModelStatistics(
      std::string_view model, std::string_view version) = 0;

  // Model repository extension.
  virtual absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> RepositoryIndex(
      bool ready_only) = 0;
  // `config_json` non-empty: the `config` parameter (a model configuration as JSON).
  virtual absl::Status LoadModel(std::string_view model, std::string_view config_json) = 0;
  virtual absl::Status UnloadModel(std::string_view model) = 0;

  // System shared memory extension: registers `region` (a POSIX shm object the caller created;
  // the server maps it) under `region.name`, and unregisters it (an unknown name is OK, as in
  // Triton). Inputs then name the region in their shared_memory_* parameters (InferSpec). Servers
  // that do not serve the extension answer UNIMPLEMENTED (HTTP 501, gRPC 12).
  virtual absl::Status RegisterSystemSharedMemory(const protocol::SharedMemoryRegion& region) = 0;
  virtual absl::Status UnregisterSystemSharedMemory(std::string_view name) = 0;
};

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_CLIENT_H_
