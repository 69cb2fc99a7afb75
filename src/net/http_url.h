#ifndef BRIGADE_NET_HTTP_URL_H_
#define BRIGADE_NET_HTTP_URL_H_

// HttpUrl: an http:// URL split into what HttpConnection needs (host, port) and the request
// target. Plain http:// only: Debian-only builds have no second TLS stack, so a collector or
// peer that needs TLS sits behind a sidecar on localhost.
//
// Thread-safe (pure function). Failure: INVALID_ARGUMENT naming what is wrong with the URL.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace brigade::net {

struct HttpUrl {
  std::string host{};
  uint16_t port = 80;
  std::string target = "/";  // path and query
};

// Parses http://host[:port][/path...] (host may be [IPv6]). INVALID_ARGUMENT otherwise,
// including https:// (not supported).
absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url);

}  // namespace brigade::net

#endif  // BRIGADE_NET_HTTP_URL_H_
