#ifndef BRIGADE_FRONTEND_HTTP_METRICS_HTTP_HANDLER_H_
#define BRIGADE_FRONTEND_HTTP_METRICS_HTTP_HANDLER_H_

// MetricsHttpHandler: the handler of the optional metrics-only port (`brigade serve
// --metrics-port`, Triton's 8002): `GET /metrics` answers the server's Prometheus exposition;
// every other path is 404 and every other method on /metrics 405, as JSON errors. It lets
// Prometheus scrape a port that exposes nothing else (no inference, no repository control).
//
// Thread safety: Handle() may run on any io thread concurrently; it only reads the server.
// Ownership: borrows the InferenceServer, which must outlive the HttpServer using this handler.

#include "frontend/http/http_handler.h"
#include "server/inference_server.h"

namespace brigade::frontend {

class MetricsHttpHandler final : public HttpHandler {
 public:
  explicit MetricsHttpHandler(const InferenceServer* server) : server_(server) {}

  void Handle(HttpRequest request, HttpResponder responder) override;

 private:
  const InferenceServer* const server_;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_METRICS_HTTP_HANDLER_H_
