#include "net/http_url.h"

#include "core/strings.h"

namespace brigade::net {

absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    return absl::InvalidArgumentError(
        StrCat("URL '", url, "': only http:// is supported (no TLS)"));
  }
  std::string_view rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  HttpUrl out;
  out.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat("URL '", url, "': unterminated IPv6 address"));
    }
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return absl::InvalidArgumentError(StrCat("URL '", url, "': bad port"));
      port = after.substr(1);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return absl::InvalidArgumentError(StrCat("URL '", url, "': no host"));
  out.host = std::string(host);
  if (!port.empty() && (!ParseInteger(port, &out.port) || out.port == 0)) {
    return absl::InvalidArgumentError(StrCat("URL '", url, "': bad port '", port, "'"));
  }
  return out;
}

}  // namespace brigade::net
