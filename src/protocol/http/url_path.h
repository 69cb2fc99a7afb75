#ifndef BRIGADE_PROTOCOL_HTTP_URL_PATH_H_
#define BRIGADE_PROTOCOL_HTTP_URL_PATH_H_

// The request paths of the KServe v2 REST protocol as a client writes them: model and version
// names are path segments, so every byte outside RFC 3986's unreserved set is percent-encoded
// (a model named "a/b" must not become two segments). The server's side, parsing them, is the
// front end's route table (frontend/http/kserve_route.h). Pure functions; thread-safe.

#include <string>
#include <string_view>

namespace brigade::protocol::http {

// Appends a path segment, percent-encoding every byte outside RFC 3986's unreserved set.
void AppendPercentEncoded(std::string_view segment, std::string* out);

// Appends "/v2/models/<model>[/versions/<version>]<suffix>" with the names percent-encoded.
void AppendModelPath(std::string_view model, std::string_view version, std::string_view suffix,
                     std::string* out);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_URL_PATH_H_
