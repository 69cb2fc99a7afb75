#include "frontend/http/kserve_route.h"

#include "gtest/gtest.h"

namespace brigade::frontend {
namespace {

KServeRoute Route(std::string_view method, std::string_view path) {
  auto matched = MatchKServeRoute(method, path);
  const RouteError* error = std::get_if<RouteError>(&matched);
  EXPECT_EQ(error, nullptr) << method << " " << path << ": " << (error ? error->message : "");
  return error == nullptr ? std::get<KServeRoute>(matched)
                          : KServeRoute{KServeEndpoint::kServerLive, "?", "?"};
}

RouteError Error(std::string_view method, std::string_view path) {
  auto matched = MatchKServeRoute(method, path);
  EXPECT_TRUE(std::holds_alternative<RouteError>(matched)) << method << " " << path;
  return std::holds_alternative<RouteError>(matched) ? std::get<RouteError>(matched)
                                                     : RouteError{0, "", ""};
}

TEST(KServeRouteTest, MatchesEveryEndpoint) {
  EXPECT_EQ(Route("GET", "/v2").endpoint, KServeEndpoint::kServerMetadata);
  EXPECT_EQ(Route("GET", "/v2/health/live").endpoint, KServeEndpoint::kServerLive);
  EXPECT_EQ(Route("GET", "/v2/health/ready").endpoint, KServeEndpoint::kServerReady);
  EXPECT_EQ(Route("POST", "/v2/repository/index").endpoint, KServeEndpoint::kRepositoryIndex);
  EXPECT_EQ(Route("GET", "/v2/models/stats").endpoint, KServeEndpoint::kModelStats);
  EXPECT_EQ(Route("GET", "/v2/models/stats").model, "");

  const KServeRoute metadata = Route("GET", "/v2/models/resnet");
  EXPECT_EQ(metadata.endpoint, KServeEndpoint::kModelMetadata);
  EXPECT_EQ(metadata.model, "resnet");
  EXPECT_EQ(metadata.version, "");

  const KServeRoute versioned = Route("GET", "/v2/models/resnet/versions/3");
  EXPECT_EQ(versioned.endpoint, KServeEndpoint::kModelMetadata);
  EXPECT_EQ(versioned.version, "3");

  const struct {
    const char* method;
    const char* action;
    KServeEndpoint endpoint;
  } actions[] = {{"GET", "ready", KServeEndpoint::kModelReady},
                 {"POST", "infer", KServeEndpoint::kModelInfer},
                 {"GET", "config", KServeEndpoint::kModelConfig},
                 {"GET", "stats", KServeEndpoint::kModelStats}};
  for (const auto& a : actions) {
    const KServeRoute plain = Route(a.method, std::string("/v2/models/m/") + a.action);
    EXPECT_EQ(plain.endpoint, a.endpoint) << a.action;
    EXPECT_EQ(plain.model, "m");
    const KServeRoute with_version =
        Route(a.method, std::string("/v2/models/m/versions/12/") + a.action);
    EXPECT_EQ(with_version.endpoint, a.endpoint) << a.action;
    EXPECT_EQ(with_version.version, "12");
  }

  const KServeRoute load = Route("POST", "/v2/repository/models/m/load");
  EXPECT_EQ(load.endpoint, KServeEndpoint::kRepositoryLoad);
  EXPECT_EQ(load.model, "m");
  EXPECT_EQ(Route("POST", "/v2/repository/models/m/unload").endpoint,
            KServeEndpoint::kRepositoryUnload);
}

TEST(KServeRouteTest, HeadIsAcceptedWhereGetIs) {
  EXPECT_EQ(Route("HEAD", "/v2/health/ready").endpoint, KServeEndpoint::kServerReady);
}

TEST(KServeRouteTest, PercentDecodesSegments) {
  EXPECT_EQ(Route("GET", "/v2/models/my%20model%2Fx/ready").model, "my model/x");
  EXPECT_EQ(Error("GET", "/v2/models/bad%2/ready").http_status, 404);
  EXPECT_EQ(Error("GET", "/v2/models/bad%zz/ready").http_status, 404);
}

TEST(KServeRouteTest, UnknownPathsAreNotFound) {
  for (const char* path :
       {"/index.html", "/v1", "/v2/", "/metrics/", "/v2/cache", "/v2/cache/invalidate/x",
        "/v2/models", "/v2/models/", "/v2//models/m", "/v2/health", "/v2/health/alive",
        "/v2/models/m/versions", "/v2/models/m/versions/1/infer/x", "/v2/models/m/predict",
        "/v2/repository/models/m", "/v2/repository/models/m/delete", "v2"}) {
    const RouteError error = Error("GET", path);
    EXPECT_EQ(error.http_status, 404) << path;
  }
}

TEST(KServeRouteTest, LoggingTakesGetAndPost) {
  EXPECT_EQ(Route("GET", "/v2/logging").endpoint, KServeEndpoint::kLogging);
  EXPECT_EQ(Route("POST", "/v2/logging").endpoint, KServeEndpoint::kLogging);
  const RouteError put = Error("PUT", "/v2/logging");
  EXPECT_EQ(put.http_status, 405);
  EXPECT_EQ(put.allow, "GET, HEAD, POST");
}

TEST(KServeRouteTest, NamedRepositoriesAreNotImplementedNotMissing) {
  const RouteError index = Error("POST", "/v2/repository/other/index");
  EXPECT_EQ(index.http_status, 501);
  EXPECT_NE(index.message.find("repository 'other'"), std::string::npos) << index.message;
  EXPECT_EQ(Error("POST", "/v2/repository/other/models/m/load").http_status, 501);
  EXPECT_EQ(Error("POST", "/v2/repository/other/models/m/unload").http_status, 501);
  EXPECT_EQ(Error("POST", "/v2/repository/other/models/m/reload").http_status, 404);
}

TEST(KServeRouteTest, BrigadeEndpointsRouteWithTheirMethods) {
  EXPECT_EQ(Route("GET", "/").endpoint, KServeEndpoint::kDashboard);
  EXPECT_EQ(Route("GET", "/metrics").endpoint, KServeEndpoint::kMetrics);
  EXPECT_EQ(Route("POST", "/v2/cache/invalidate").endpoint, KServeEndpoint::kCacheInvalidate);
  EXPECT_EQ(Error("POST", "/metrics").http_status, 405);
  EXPECT_EQ(Error("GET", "/v2/cache/invalidate").http_status, 405);
}

TEST(KServeRouteTest, WrongMethodIs405WithAllow) {
  RouteError get_infer = Error("GET", "/v2/models/m/infer");
  EXPECT_EQ(get_infer.http_status, 405);
  EXPECT_EQ(get_infer.allow, "POST");
  RouteError post_ready = Error("POST", "/v2/health/ready");
  EXPECT_EQ(post_ready.http_status, 405);
  EXPECT_EQ(post_ready.allow, "GET, HEAD");
  EXPECT_EQ(Error("DELETE", "/v2/repository/index").http_status, 405);
}

TEST(KServeRouteTest, SharedMemoryAndTraceSettingEndpoints) {
  EXPECT_EQ(Route("GET", "/v2/systemsharedmemory/status").endpoint,
            KServeEndpoint::kSharedMemoryStatus);
  EXPECT_EQ(Route("GET", "/v2/systemsharedmemory/status").model, "");
  const KServeRoute status = Route("GET", "/v2/systemsharedmemory/region/in%20put/status");
  EXPECT_EQ(status.endpoint, KServeEndpoint::kSharedMemoryStatus);
  EXPECT_EQ(status.model, "in put");
  EXPECT_EQ(Route("POST", "/v2/systemsharedmemory/region/r/register").endpoint,
            KServeEndpoint::kSharedMemoryRegister);
  EXPECT_EQ(Route("POST", "/v2/systemsharedmemory/region/r/unregister").model, "r");
  EXPECT_EQ(Route("POST", "/v2/systemsharedmemory/unregister").endpoint,
            KServeEndpoint::kSharedMemoryUnregister);
  EXPECT_EQ(Error("GET", "/v2/systemsharedmemory/region/r/register").http_status, 405);
  EXPECT_EQ(Error("GET", "/v2/systemsharedmemory/region/r").http_status, 404);
  const RouteError cuda = Error("POST", "/v2/cudasharedmemory/region/r/register");
  EXPECT_EQ(cuda.http_status, 501);
  EXPECT_NE(cuda.message.find("CUDA shared memory is not supported"), std::string::npos);

  EXPECT_EQ(Route("GET", "/v2/trace/setting").endpoint, KServeEndpoint::kTraceSetting);
  EXPECT_EQ(Route("POST", "/v2/trace/setting").model, "");
  const KServeRoute model = Route("POST", "/v2/models/resnet/trace/setting");
  EXPECT_EQ(model.endpoint, KServeEndpoint::kTraceSetting);
  EXPECT_EQ(model.model, "resnet");
  EXPECT_EQ(Error("GET", "/v2/models/resnet/versions/1/trace/setting").http_status, 404);
}

}  // namespace
}  // namespace brigade::frontend
