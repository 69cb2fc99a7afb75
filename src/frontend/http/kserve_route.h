#ifndef BRIGADE_FRONTEND_HTTP_KSERVE_ROUTE_H_
#define BRIGADE_FRONTEND_HTTP_KSERVE_ROUTE_H_

// MatchKServeRoute: (method, path) → which KServe v2 / Triton endpoint, with the model name and
// version taken from the path. Pure; the table it implements:
//
//   GET  /v2                                         server metadata
//   GET  /v2/health/live | /v2/health/ready          health
//   GET  /v2/models/{m}[/versions/{v}]               model metadata
//   GET  /v2/models/{m}[/versions/{v}]/ready         model readiness
//   POST /v2/models/{m}[/versions/{v}]/infer         inference
//   GET  /v2/models/{m}[/versions/{v}]/config        model configuration
//   GET  /v2/models[/{m}[/versions/{v}]]/stats       statistics
//   POST /v2/repository/index                        repository index
//   POST /v2/repository/models/{m}/load | /unload    repository load / unload
//   GET|POST /v2/logging                             log settings
//   GET|POST /v2[/models/{m}]/trace/setting          trace settings
//   GET  /v2/systemsharedmemory[/region/{r}]/status  shared memory status
//   POST /v2/systemsharedmemory/region/{r}/register  shared memory registration
//   POST /v2/systemsharedmemory[/region/{r}]/unregister
//   any  /v2/cudasharedmemory/...                    501: not supported on this (CPU) server
//
// HEAD is accepted wherever GET is. Path segments are percent-decoded (a model may be called
// "my%20model"). As in Triton, /v2/models/stats means the statistics of every model, so a model
// named "stats" has no metadata endpoint.
//
// Errors: NOT_FOUND for an unknown path (or a malformed percent escape), and for a known path
// with the wrong method a RouteError with the methods it allows (→ 405 + Allow).

#include <string>
#include <string_view>
#include <variant>

namespace brigade::frontend {

enum class KServeEndpoint {
  kServerMetadata,
  kServerLive,
  kServerReady,
  kModelMetadata,
  kModelReady,
  kModelInfer,
  kModelConfig,
  kModelStats,
  kRepositoryIndex,
  kRepositoryLoad,
  kRepositoryUnload,
  kLogging,  // GET (read) or POST (change) /v2/logging
  // GET (read) or POST (change) /v2[/models/{m}]/trace/setting; `model` empty: the global ones.
  kTraceSetting,
  // System shared memory; `model` holds the region's name (empty: every region).
  kSharedMemoryStatus,      // GET  /v2/systemsharedmemory[/region/{r}]/status
  kSharedMemoryRegister,    // POST /v2/systemsharedmemory/region/{r}/register
  kSharedMemoryUnregister,  // POST /v2/systemsharedmemory[/region/{r}]/unregister
  // Brigade's own endpoints.
  kMetrics,          // GET /metrics (Prometheus text)
  kDashboard,        // GET / (the live dashboard page)
  kCacheInvalidate,  // POST /v2/cache/invalidate
};

struct KServeRoute {
  KServeEndpoint endpoint;
  std::string model;    // empty when the endpoint has none (or stats of all models)
  std::string version;  // empty when the path names none
};

struct RouteError {
  int http_status;    // 404, 405, or 501 for a feature Brigade lacks
  std::string allow;  // for 405: the methods the path accepts
  std::string message;
};

std::variant<KServeRoute, RouteError> MatchKServeRoute(std::string_view method,
                                                       std::string_view path);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_KSERVE_ROUTE_H_
