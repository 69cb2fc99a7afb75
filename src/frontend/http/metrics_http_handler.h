#ifndef BRIGADE_FRONTEND_HTTP_METRICS_HTTP_HANDLER_H_
#define BRIGADE_FRONTEND_HTTP_METRICS_HTTP_HANDLER_H_

// MetricsHttpHandler: the handler of the optional metrics-only port (`brigade serve
// --metrics-port`, Triton's 8002): `GET /metrics` answers the server's Prometheus exposition;
// every other path is 404 and every other method on /metrics 405, as JSON errors. It lets
// Prometheus scrape a port that exposes nothing else (no inference, no repository control).
//
// Thread safety: Handle() may run on any io thread concurrently; it only reads the server.
// Access: with an AccessGate (borrowed, outliving the handler), /metrics needs the `metrics` scope.
// Ownership: borrows the InferenceServer, which must outlive the HttpServer using this handler.

#include "frontend/auth/access_gate.h"
#include "frontend/http/http_handler.h"
#include "server/inference_server.h"

namespace brigade::frontend {

class MetricsHttpHandler final : public HttpHandler {
 public:
  explicit MetricsHttpHandler(const InferenceServer* server,
                              const auth::AccessGate* access_gate = nullptr)
      : server_(server), access_gate_(access_gate) {}

  void Handle(HttpRequest request, HttpResponder responder) override;

 private:
  const InferenceServer* const server_;
  const auth::AccessGate* const access_gate_;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_METRICS_HTTP_HANDLER_H_
