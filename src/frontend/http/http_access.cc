#include "frontend/http/http_access.h"

#include <string>
#include <utility>

#include "core/strings.h"
#include "protocol/http/json_writer.h"

namespace brigade::frontend {

std::optional<HttpResponse> RefuseHttp(const auth::AccessGate* gate, const HttpRequest& request,
                                       auth::Operation operation) {
  if (gate == nullptr) return std::nullopt;
  auto header = [&request](std::string_view name) { return request.Header(name); };
  auto peer_names = [&request] {
    return request.peer_names != nullptr ? std::span<const std::string>(*request.peer_names)
                                         : std::span<const std::string>();
  };
  const auth::Decision decision = gate->Check({.operation = operation,
                                               .http = true,
                                               .header = header,
                                               .post = request.method == "POST",
                                               .has_body = request.body->size() > 0,
                                               .peer_names = peer_names});
  if (decision.ok()) return std::nullopt;
  std::string body;
  protocol::http::JsonWriter writer(&body);
  writer.BeginObject();
  writer.Key("error");
  writer.String(decision.message);
  writer.EndObject();
  HttpResponse response =
      HttpResponse::Json(auth::HttpStatusFor(decision.refusal), std::move(body));
  switch (decision.refusal) {
    case auth::Refusal::kMissingToken:
      response.headers.push_back({"WWW-Authenticate", "Bearer realm=\"brigade\""});
      break;
    case auth::Refusal::kInvalidToken:
      response.headers.push_back(
          {"WWW-Authenticate", "Bearer realm=\"brigade\", error=\"invalid_token\""});
      break;
    case auth::Refusal::kScope:
      response.headers.push_back(
          {"WWW-Authenticate", StrCat("Bearer realm=\"brigade\", error=\"insufficient_scope\", "
                                      "scope=\"",
                                      auth::ScopeName(decision.scope), "\"")});
      break;
    default:
      break;
  }
  return response;
}

}  // namespace brigade::frontend
