#include "frontend/http/kserve_route.h"

#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "core/strings.h"

namespace brigade::frontend {
namespace {

enum class Verb { kGet, kPost, kGetOrPost };

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes one path segment onto the end of `out` (which never grows past the path's
// size: a decoded segment is never longer than its text); false on a malformed escape.
bool DecodeInto(std::string_view segment, std::string* out) {
  for (size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] != '%') {
      out->push_back(segment[i]);
      continue;
    }
    if (i + 2 >= segment.size()) return false;
    const int high = HexValue(segment[i + 1]);
    const int low = HexValue(segment[i + 2]);
    if (high < 0 || low < 0) return false;
    out->push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return true;
}

RouteError NotFound(std::string_view path) {
  return RouteError{404, "", StrCat("no endpoint at '", path, "'")};
}

std::variant<KServeRoute, RouteError> Accept(std::string_view method, std::string_view path,
                                             Verb verb, KServeEndpoint endpoint,
                                             std::string model = {}, std::string version = {}) {
  const bool get = method == "GET" || method == "HEAD";
  const bool ok = verb == Verb::kGet    ? get
                  : verb == Verb::kPost ? method == "POST"
                                        : get || method == "POST";
  if (!ok) {
    const std::string_view allow = verb == Verb::kGet    ? "GET, HEAD"
                                   : verb == Verb::kPost ? "POST"
                                                         : "GET, HEAD, POST";
    return RouteError{405, std::string(allow),
                      StrCat("method ", method, " is not allowed on '", path, "'; use ", allow)};
  }
  return KServeRoute{endpoint, std::move(model), std::move(version)};
}

}  // namespace

std::variant<KServeRoute, RouteError> MatchKServeRoute(std::string_view method,
                                                       std::string_view path) {
  if (path == "/") return Accept(method, path, Verb::kGet, KServeEndpoint::kDashboard);
  if (path == "/metrics") return Accept(method, path, Verb::kGet, KServeEndpoint::kMetrics);
  // Split "/v2/a/b" into {"v2", "a", "b"}, decoding each segment. No endpoint has more than
  // kMaxSegments, so the segments are inline views: of the path itself when it holds no escape
  // (every path a client library builds for a plain model name), else of one decoded copy.
  if (!path.starts_with('/')) return NotFound(path);
  constexpr size_t kMaxSegments = 8;
  absl::InlinedVector<std::string_view, kMaxSegments> segments;
  std::string decoded;
  const bool escaped = path.find('%') != std::string_view::npos;
  if (escaped) decoded.reserve(path.size());  // views into it stay valid: it never reallocates
  for (size_t start = 1; start <= path.size();) {
    if (segments.size() == kMaxSegments) return NotFound(path);
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (escaped) {
      const size_t from = decoded.size();
      if (!DecodeInto(segment, &decoded)) return NotFound(path);
      segment = std::string_view(decoded).substr(from);
    }
    if (segment.empty()) return NotFound(path);
    segments.push_back(segment);
    start = end + 1;
  }
  const size_t n = segments.size();
  if (n == 0 || segments[0] != "v2") return NotFound(path);
  if (n == 1) return Accept(method, path, Verb::kGet, KServeEndpoint::kServerMetadata);

  const std::string_view area = segments[1];
  if (area == "health" && n == 3) {
    if (segments[2] == "live") return Accept(method, path, Verb::kGet, KServeEndpoint::kServerLive);
    if (segments[2] == "ready") {
      return Accept(method, path, Verb::kGet, KServeEndpoint::kServerReady);
    }
    return NotFound(path);
  }
  if (area == "repository") {
    // Triton's /v2/repository/{name}/...: Brigade serves one repository, and says so rather than
    // "no endpoint".
    const bool named_index = n == 4 && segments[3] == "index";
    const bool named_model =
        n == 6 && segments[3] == "models" && (segments[5] == "load" || segments[5] == "unload");
    if (named_index || named_model) {
      return RouteError{501, "",
                        StrCat("repository '", segments[2],
                               "': Brigade serves one model repository; use /v2/repository/",
                               named_index ? "index" : "models/{model}/load|unload",
                               " without a repository name")};
    }
    if (n == 3 && segments[2] == "index") {
      return Accept(method, path, Verb::kPost, KServeEndpoint::kRepositoryIndex);
    }
    if (n == 5 && segments[2] == "models") {
      if (segments[4] == "load") {
        return Accept(method, path, Verb::kPost, KServeEndpoint::kRepositoryLoad,
                      std::string(segments[3]));
      }
      if (segments[4] == "unload") {
        return Accept(method, path, Verb::kPost, KServeEndpoint::kRepositoryUnload,
                      std::string(segments[3]));
      }
    }
    return NotFound(path);
  }
  if (area == "trace" && n == 3 && segments[2] == "setting") {
    return Accept(method, path, Verb::kGetOrPost, KServeEndpoint::kTraceSetting);
  }
  if (area == "systemsharedmemory") {
    if (n == 3 && segments[2] == "status") {
      return Accept(method, path, Verb::kGet, KServeEndpoint::kSharedMemoryStatus);
    }
    if (n == 3 && segments[2] == "unregister") {
      return Accept(method, path, Verb::kPost, KServeEndpoint::kSharedMemoryUnregister);
    }
    if (n == 5 && segments[2] == "region") {
      if (segments[4] == "status") {
        return Accept(method, path, Verb::kGet, KServeEndpoint::kSharedMemoryStatus,
                      std::string(segments[3]));
      }
      if (segments[4] == "register") {
        return Accept(method, path, Verb::kPost, KServeEndpoint::kSharedMemoryRegister,
                      std::string(segments[3]));
      }
      if (segments[4] == "unregister") {
        return Accept(method, path, Verb::kPost, KServeEndpoint::kSharedMemoryUnregister,
                      std::string(segments[3]));
      }
    }
    return NotFound(path);
  }
  if (area == "cudasharedmemory") {
    return RouteError{501, "",
                      "CUDA shared memory is not supported on this server (it runs models on "
                      "CPUs); use system shared memory (/v2/systemsharedmemory)"};
  }
  if (area == "logging" && n == 2) {
    return Accept(method, path, Verb::kGetOrPost, KServeEndpoint::kLogging);
  }
  if (area == "cache" && n == 3 && segments[2] == "invalidate") {
    return Accept(method, path, Verb::kPost, KServeEndpoint::kCacheInvalidate);
  }
  if (area != "models" || n < 3) return NotFound(path);
  if (n == 3 && segments[2] == "stats") {
    return Accept(method, path, Verb::kGet, KServeEndpoint::kModelStats);
  }
  std::string model(segments[2]);
  std::string version;
  size_t next = 3;
  if (next < n && segments[next] == "versions") {
    if (next + 1 >= n) return NotFound(path);
    version = std::string(segments[next + 1]);
    next += 2;
  }
  if (next == n) {
    return Accept(method, path, Verb::kGet, KServeEndpoint::kModelMetadata, std::move(model),
                  std::move(version));
  }
  if (version.empty() && next + 2 == n && segments[next] == "trace" &&
      segments[next + 1] == "setting") {
    return Accept(method, path, Verb::kGetOrPost, KServeEndpoint::kTraceSetting, std::move(model));
  }
  if (next + 1 != n) return NotFound(path);
  const std::string_view action = segments[next];
  if (action == "ready") {
    return Accept(method, path, Verb::kGet, KServeEndpoint::kModelReady, std::move(model),
                  std::move(version));
  }
  if (action == "infer") {
    return Accept(method, path, Verb::kPost, KServeEndpoint::kModelInfer, std::move(model),
                  std::move(version));
  }
  if (action == "config") {
    return Accept(method, path, Verb::kGet, KServeEndpoint::kModelConfig, std::move(model),
                  std::move(version));
  }
  if (action == "stats") {
    return Accept(method, path, Verb::kGet, KServeEndpoint::kModelStats, std::move(model),
                  std::move(version));
  }
  return NotFound(path);
}

}  // namespace brigade::frontend
