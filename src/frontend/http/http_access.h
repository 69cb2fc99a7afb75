#ifndef BRIGADE_FRONTEND_HTTP_HTTP_ACCESS_H_
#define BRIGADE_FRONTEND_HTTP_HTTP_ACCESS_H_

// The HTTP side of access control: an HttpRequest's facts handed to the AccessGate, and the
// answer to a refused request: {"error": "..."} with the refusal's status (auth/access_policy.h);
// a 401 adds `WWW-Authenticate: Bearer realm="brigade"` (with `error="invalid_token"` for a token
// that is not valid), a missing scope's 403 names it there too (`error="insufficient_scope",
// scope="admin"`), so clients can tell "who are you" from "not you".
//
// Stateless; safe from any thread. The gate is borrowed for the call.

#include <optional>

#include "frontend/auth/access_gate.h"
#include "frontend/http/http_message.h"

namespace brigade::frontend {

// nullopt when `gate` is null or lets the request through; else the refusal to send.
std::optional<HttpResponse> RefuseHttp(const auth::AccessGate* gate, const HttpRequest& request,
                                       auth::Operation operation);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_HTTP_ACCESS_H_
