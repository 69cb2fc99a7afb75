#include "frontend/http/metrics_http_handler.h"

#include <string>
#include <utility>

#include "core/strings.h"
#include "frontend/http/http_access.h"
#include "telemetry/prometheus_text.h"

namespace brigade::frontend {
namespace {

HttpResponse JsonError(int status, std::string_view message) {
  std::string body = "{\"error\":\"";
  body.append(message);  // fixed ASCII messages below: nothing to escape
  body.append("\"}");
  return HttpResponse::Json(status, std::move(body));
}

}  // namespace

void MetricsHttpHandler::Handle(HttpRequest request, HttpResponder responder) {
  if (request.path() != "/metrics") {
    responder.Send(JsonError(404, "this port serves only GET /metrics"));
    return;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse response = JsonError(405, "/metrics answers GET only");
    response.headers.push_back({"Allow", "GET, HEAD"});
    responder.Send(std::move(response));
    return;
  }
  if (std::optional<HttpResponse> refused =
          RefuseHttp(access_gate_, request, auth::Operation::kMetrics)) {
    responder.Send(*std::move(refused));
    return;
  }
  HttpResponse response;
  response.headers.push_back({"Content-Type", std::string(telemetry::kPrometheusContentType)});
  response.body = server_->MetricsText();
  responder.Send(std::move(response));
}

}  // namespace brigade::frontend
