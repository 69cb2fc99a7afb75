#ifndef BRIGADE_FRONTEND_HTTP_KSERVE_HTTP_HANDLER_H_
#define BRIGADE_FRONTEND_HTTP_KSERVE_HTTP_HANDLER_H_

// KServeHttpHandler: the KServe v2 / Triton REST API on top of an InferenceServer. Routes each
// request (kserve_route.h), decodes it with the codec, makes one InferenceServer call and encodes
// the answer; it holds no protocol logic of its own beyond that glue.
//
// Behaviour worth knowing:
//   * Health and readiness answer by status code with an empty body, as Triton does: 200 when
//     true, 400 when false (Kubernetes probes and load balancers read only the code).
//   * Errors are {"error": "..."} with the status from frontend/status_map.h; an UNAVAILABLE error
//     carrying frontend::kRetryAfterPayload adds `Retry-After: <seconds>`.
//   * Inference never blocks the io thread: the request goes to InferenceServer::Infer with a
//     cancel flag the transport raises if the client disconnects, and the response is encoded on
//     the connection's io thread when the server answers (SendFrom), not on the instance thread.
//     t0 is the transport's arrival stamp; t5 is added when the last byte is written, and the
//     whole StageClock is then passed to Options::on_infer_sent.
//   * Repository load/unload block until done, so they run on a dedicated worker thread; when
//     `max_queued_repository_requests` are already waiting the answer is 503 at once.
//   * Access: with an AccessGate, each routed request is checked before anything else; a refusal
//     is answered by http_access.h (401 with WWW-Authenticate, 403, 415).
//   * System shared memory (frontend/shm) and trace settings: answered inline by
//     kserve_extensions.h. An infer request's shared-memory inputs are views into their regions,
//     and its shared-memory outputs are written there when the server answers, before the
//     answer (without their data) is encoded.
//   * Compression, as Triton: an inference request body may be gzip or deflate (Content-Encoding;
//     inflated up to `max_inflated_body_bytes`, beyond which it gets 413; a corrupt one 400; any
//     other coding 415), and an inference response is compressed in the best coding the
//     request's Accept-Encoding allows, when it is 1 KiB or larger. The binary extension's
//     Inference-Header-Content-Length counts the uncompressed body both ways (content_coding.h).
//
// Thread safety: Handle() is called concurrently from the io threads; the handler is immutable
// after Create apart from the worker's queue. Lifetime: `server` is borrowed and must outlive the
// handler; the handler must outlive the HttpServer that calls it. Requests in flight when the
// handler is destroyed still complete (their callbacks hold only the responder).

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/blocking_worker.h"
#include "core/infer_response.h"
#include "frontend/auth/access_gate.h"
#include "frontend/http/http_handler.h"
#include "frontend/shm/shared_memory_registry.h"
#include "protocol/header_forwarding.h"
#include "protocol/metadata.h"
#include "server/inference_server.h"

namespace brigade::frontend {

class KServeHttpHandler final : public HttpHandler {
 public:
  struct Options {
    // Load/unload requests that may wait for the repository worker before new ones get 503.
    size_t max_queued_repository_requests = 8;
    // Largest inference request body after inflating a compressed one (the transport's
    // max_body_bytes only sees the compressed size). Triton's default input limit: 64 MiB.
    size_t max_inflated_body_bytes = size_t{64} << 20;
    // Non-finite output values in JSON as "NaN", "Infinity", "-Infinity" strings, which strict
    // JSON parsers read; false: Triton's bare NaN / Infinity, which Python's json module reads.
    bool non_finite_as_strings = false;
    // Called on an io thread after an inference response was written (`sent.ok`) or could not be,
    // with the response whose StageClock holds t0..t5. Optional; must be cheap and thread-safe.
    std::function<void(const InferResponse& response, const SentInfo& sent)> on_infer_sent;
    // Who may call what (auth/access_gate.h), checked right after routing, before any body is
    // decoded; null: everyone may call everything. Borrowed; must outlive the handler.
    const auth::AccessGate* access_gate = nullptr;
    // Triton's --http-header-forward-pattern (protocol/header_forwarding.h); null: no header
    // becomes a parameter. Borrowed; must outlive the handler.
    const protocol::HeaderForwarding* header_forwarding = nullptr;
    // System shared memory's regions (frontend/shm); null: the feature is off (its endpoints
    // answer 501 and inputs or outputs naming a region are refused). Borrowed; must outlive the
    // handler.
    SharedMemoryRegistry* shared_memory = nullptr;
  };

  static absl::StatusOr<std::unique_ptr<KServeHttpHandler>> Create(InferenceServer* server,
                                                                   Options options);
  // Create() validates; these construct directly (`server` must not be null).
  explicit KServeHttpHandler(InferenceServer* server);
  KServeHttpHandler(InferenceServer* server, Options options);

  void Handle(HttpRequest request, HttpResponder responder) override;
  // The binary section of an infer request (after Inference-Header-Content-Length bytes of JSON)
  // starts aligned, so the input tensors that borrow it are aligned too.
  size_t AlignedBodyOffset(const HttpRequest& head) override;

 private:
  void HandleInfer(const HttpRequest& request, HttpResponder responder, std::string_view model,
                   std::string_view version);
  // The model's input when it has exactly one (a raw binary request's target), else nullopt.
  std::optional<protocol::TensorMetadata> OnlyInput(std::string_view model,
                                                    std::string_view version);
  void HandleRepositoryChange(bool load, const HttpRequest& request, HttpResponder responder,
                              const std::string& model);
  void HandleCacheInvalidate(const HttpRequest& request, HttpResponder responder);

  InferenceServer* const server_;
  const Options options_;
  // Shared with the infer callbacks so on_infer_sent stays valid for requests still in flight.
  std::shared_ptr<const std::function<void(const InferResponse&, const SentInfo&)>> on_sent_;
  BlockingWorker repository_worker_;
  // Cache invalidations wait for Redis (bounded); on their own thread so they never queue behind
  // a model load.
  BlockingWorker cache_worker_;
};

// {"error": message} with the HTTP status mapped from `status` (and Retry-After when it carries
// frontend::kRetryAfterPayload). Exposed for tests.
HttpResponse ErrorResponse(const absl::Status& status);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_KSERVE_HTTP_HANDLER_H_
