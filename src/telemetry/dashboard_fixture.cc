// observe_dashboard_fixture: a stand-in server for the dashboard's end-to-end test until the
// real HTTP front end serves / and /metrics. It answers a small KServe v2 subset on 127.0.0.1
// with two built-in models — "identity" (echoes INPUT0) and "sum" (adds INPUT0's elements) —
// and records every request in the real metrics code (RequestMetrics, ModelStats, Triton
// families; its little response cache under the real server's brigade_response_cache_hits_total /
// _misses_total names, which the page reads) with stage stamps taken around its own steps: t0 on
// entry, decoded after parsing, t1 after validation and a response-cache lookup, queue enter/leave
// around taking the model's instance, t2/t3 around the computation, t4 after encoding, t5 before
// returning.
//
//   GET  /                        the dashboard page (DashboardPage())
//   GET  /metrics                 Prometheus text
//   POST /v2/repository/index     the two models, READY
//   GET  /v2/models/<m>           metadata: INPUT0 FP32 [-1, 4] → OUTPUT0
//   POST /v2/models/<m>/infer     JSON tensors; 400 (outcome error) for a malformed body
//
// Usage: observe_dashboard_fixture [port]   (0 or none: a free port; prints the URL)
// Runs until SIGINT or SIGTERM.

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/strings.h"
#include "net/test_http_server.h"
#include "protocol/failure_reason.h"
#include "simdjson.h"
#include "telemetry/dashboard_page.h"
#include "telemetry/model_stats.h"
#include "telemetry/request_metrics.h"
#include "telemetry/triton_metrics.h"

namespace brigade::telemetry {
namespace {

constexpr size_t kCacheEntries = 64;

struct FixtureModel {
  std::unique_ptr<ModelStats> stats;
  ModelRequestMetrics* metrics = nullptr;
  Counter* cache_hits = nullptr;  // brigade_response_cache_{hits,misses}_total, memory tier
  Counter* cache_misses = nullptr;
  std::mutex instance;  // the one "instance"; queue time is the wait for it
  // Response cache: request body → response body, least recently used dropped first.
  std::list<std::pair<std::string, std::string>> lru;
  std::unordered_map<std::string, std::list<std::pair<std::string, std::string>>::iterator> index;
};

class Fixture {
 public:
  Fixture() : request_metrics_(*RequestMetrics::Create(&registry_)) {
    CounterFamily* hits = *registry_.AddCounter(
        "brigade_response_cache_hits_total", "Requests answered from the response cache, by tier",
        {"model", "tier"});
    CounterFamily* misses =
        *registry_.AddCounter("brigade_response_cache_misses_total",
                              "Response cache lookups that found no usable answer", {"model"});
    for (const char* name : {"identity", "sum"}) {
      FixtureModel& model = models_[name];
      model.stats = std::make_unique<ModelStats>(name, "1", 0);
      model.metrics = request_metrics_->ForModel(name, "1");
      model.cache_hits = *hits->WithLabels({name, "memory"});
      model.cache_misses = *misses->WithLabels({name});
    }
  }

  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body{};
  };

  Response Handle(const net::TestHttpServer::Request& request) {
    StageClock clock;
    clock.Mark(Stage::kArrival, Now());
    const std::string_view path =
        std::string_view(request.target).substr(0, std::string_view(request.target).find('?'));
    if (request.method == "GET" && path == "/") {
      return {.status = 200,
              .content_type = std::string(kDashboardContentType),
              .body = std::string(DashboardPage())};
    }
    if (request.method == "GET" && path == "/metrics") {
      std::string text = registry_.Text();
      std::vector<protocol::ModelStatistics> snapshots;
      for (const auto& [name, model] : models_) snapshots.push_back(model.stats->Snapshot());
      AppendTritonMetrics(snapshots, request_metrics_.get(), &text);
      return {.status = 200, .content_type = std::string(kPrometheusContentType), .body = text};
    }
    if (request.method == "POST" && path == "/v2/repository/index") {
      return Json(200, R"([{"name":"identity","version":"1","state":"READY"},)"
                       R"({"name":"sum","version":"1","state":"READY"}])");
    }
    constexpr std::string_view kPrefix = "/v2/models/";
    if (path.starts_with(kPrefix)) {
      std::string_view rest = path.substr(kPrefix.size());
      const bool infer = rest.ends_with("/infer");
      if (infer) rest.remove_suffix(6);
      const auto it = models_.find(std::string(rest));
      if (it == models_.end()) {
        request_metrics_->Unresolved()->RecordRequest(Protocol::kHttp, RequestOutcome::kError,
                                                      Stamped(clock));
        return Json(404, StrCat(R"({"error":"unknown model ')", rest, R"('"})"));
      }
      if (!infer && request.method == "GET") {
        return Json(200, StrCat(R"({"name":")", rest,
                                R"(","versions":["1"],)"
                                R"("platform":"brigade_fixture","inputs":[{"name":"INPUT0",)"
                                R"("datatype":"FP32","shape":[-1,4]}],"outputs":[)"
                                R"({"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})"));
      }
      if (infer && request.method == "POST") return Infer(it->first, it->second, request, clock);
    }
    return Json(404, R"({"error":"not found"})");
  }

 private:
  static Response Json(int status, std::string body) {
    return {.status = status, .content_type = "application/json", .body = std::move(body)};
  }
  int64_t Now() const { return Clock::Real()->NowNs(); }
  StageClock Stamped(StageClock clock) const {
    clock.Mark(Stage::kSent, Now());
    return clock;
  }

  Response Infer(const std::string& name, FixtureModel& model,
                 const net::TestHttpServer::Request& request, StageClock& clock) {
    // Decode: INPUT0's data as doubles.
    std::vector<double> data;
    simdjson::dom::element body;
    simdjson::dom::array values;
    const bool decoded = parser_.parse(request.body).get(body) == simdjson::SUCCESS &&
                         body["inputs"].at(0)["data"].get_array().get(values) == simdjson::SUCCESS;
    if (decoded) {
      for (simdjson::dom::element value : values) {
        double number;
        if (value.get_double().get(number) != simdjson::SUCCESS) break;
        data.push_back(number);
      }
    }
    clock.Mark(Stage::kDecoded, Now());
    if (!decoded || data.empty() || data.size() != values.size()) {
      return Finish(model, clock, absl::InvalidArgumentError("bad request"),
                    Json(400, R"({"error":"expected inputs[0].data as a list of numbers"})"));
    }
    // Preprocess: the response cache.
    const int64_t lookup_start_ns = Now();
    const auto cached = model.index.find(request.body);
    const bool hit = cached != model.index.end();
    clock.Mark(Stage::kPreprocessed, Now());
    (hit ? model.cache_hits : model.cache_misses)->Add();
    if (hit) {
      model.stats->RecordCacheHit(Now() - lookup_start_ns);
      model.lru.splice(model.lru.begin(), model.lru, cached->second);
      return Finish(model, clock, absl::OkStatus(), Json(200, cached->second->second));
    }
    model.stats->RecordCacheMiss(Now() - lookup_start_ns);
    clock.Mark(Stage::kQueueEnter, Now());
    std::lock_guard<std::mutex> instance(model.instance);
    clock.Mark(Stage::kQueueLeave, Now());
    model.stats->RecordQueue(clock.BetweenNs(Stage::kQueueEnter, Stage::kQueueLeave));
    model.metrics->busy_instances().Increment();
    clock.Mark(Stage::kInferStart, Now());
    std::vector<double> output = data;
    if (name == "sum") {
      double total = 0;
      for (double v : data) total += v;
      output = {total};
    }
    clock.Mark(Stage::kInferEnd, Now());
    model.metrics->busy_instances().Decrement();
    model.metrics->RecordBatch(1);
    std::string response =
        StrCat(R"({"model_name":")", name, R"(","model_version":"1","outputs":[{"name":"OUTPUT0",)",
               R"("datatype":"FP64","shape":[1,)", output.size(), R"(],"data":[)",
               fmt::join(output, ","), "]}]}");
    clock.Mark(Stage::kPostprocessed, Now());
    model.stats->RecordExecution(1, 1, clock.BetweenNs(Stage::kQueueLeave, Stage::kInferStart),
                                 clock.BetweenNs(Stage::kInferStart, Stage::kInferEnd),
                                 clock.BetweenNs(Stage::kInferEnd, Stage::kPostprocessed));
    model.lru.emplace_front(request.body, response);
    model.index[request.body] = model.lru.begin();
    if (model.lru.size() > kCacheEntries) {
      model.index.erase(model.lru.back().first);
      model.lru.pop_back();
    }
    return Finish(model, clock, absl::OkStatus(), Json(200, std::move(response)));
  }

  Response Finish(FixtureModel& model, StageClock& clock, const absl::Status& status,
                  Response response) {
    clock.Mark(Stage::kSent, Now());
    const int64_t total_ns = clock.BetweenNs(Stage::kArrival, Stage::kSent);
    if (status.ok()) {
      model.stats->RecordSuccess(total_ns);
    } else {
      model.stats->RecordFailure(protocol::FailureReasonOf(status), total_ns);
    }
    model.metrics->RecordRequest(Protocol::kHttp, OutcomeFromStatus(status), clock);
    return response;
  }

  MetricsRegistry registry_;
  std::unique_ptr<RequestMetrics> request_metrics_;
  std::map<std::string, FixtureModel> models_;
  simdjson::dom::parser parser_;  // one request at a time (main() serializes them)
};

}  // namespace
}  // namespace brigade::telemetry

int main(int argc, char** argv) {
  int port = 0;
  if (argc > 1 && !brigade::ParseInteger(std::string_view(argv[1]), &port)) {
    std::fprintf(stderr, "usage: %s [port]\n", argv[0]);
    return 2;
  }
  // Block the signals before any thread starts, so every thread inherits the mask and the main
  // thread's sigwait receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  brigade::telemetry::Fixture fixture;
  // The server calls the handler from one thread per connection; the fixture is single-threaded.
  std::mutex fixture_mu;
  auto server = brigade::net::TestHttpServer::Start(
      [&](const brigade::net::TestHttpServer::Request& request) {
        std::lock_guard<std::mutex> lock(fixture_mu);
        brigade::telemetry::Fixture::Response response = fixture.Handle(request);
        return brigade::net::TestHttpServer::Answer(request, response.status, response.content_type,
                                                    response.body);
      },
      static_cast<uint16_t>(port));
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  std::printf("listening on http://127.0.0.1:%d/\n", (*server)->port());
  std::fflush(stdout);
  int received = 0;
  sigwait(&signals, &received);
  return 0;
}
