#include "telemetry/otlp_exporter.h"

#include <map>

#include "absl/synchronization/mutex.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "net/test_http_server.h"
#include "simdjson.h"
#include "telemetry/span_processor.h"
#include "telemetry/tracer.h"

namespace brigade::telemetry {
namespace {

using ::testing::HasSubstr;

// A fake OTLP collector on a real socket: records each request, answers from a script.
class FakeCollector {
 public:
  explicit FakeCollector(std::vector<int> statuses = {}) : statuses_(std::move(statuses)) {
    server_ = *net::TestHttpServer::Start([this](const net::TestHttpServer::Request& request) {
      absl::MutexLock lock(&mu_);
      requests_.push_back(request);
      const int status =
          requests_.size() <= statuses_.size() ? statuses_[requests_.size() - 1] : 200;
      std::vector<std::pair<std::string, std::string>> headers;
      if (status == 503) headers.emplace_back("Retry-After", "0");
      return net::TestHttpServer::Answer(request, status, "application/json",
                                         status == 200 ? "{}" : "{\"message\":\"nope\"}", headers);
    });
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + "/v1/traces";
  }
  std::vector<net::TestHttpServer::Request> requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }
  int connections() const { return server_->connections_accepted(); }

 private:
  const std::vector<int> statuses_;
  absl::Mutex mu_;
  std::vector<net::TestHttpServer::Request> requests_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<net::TestHttpServer> server_;
};

OtlpHttpExporter::Options FastOptions(std::string endpoint) {
  OtlpHttpExporter::Options options;
  options.endpoint = std::move(endpoint);
  options.timeout = absl::Seconds(5);
  options.initial_backoff = absl::Milliseconds(1);
  options.max_backoff = absl::Milliseconds(2);
  return options;
}

bool IsLowerHex(std::string_view text, size_t length) {
  return text.size() == length && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

TEST(OtlpHttpExporterTest, CollectorReceivesOtlpJsonWithThePropagatedTraceId) {
  FakeCollector collector;
  OtlpHttpExporter::Options options = FastOptions(collector.url());
  options.resource.service_name = "brigade-test";
  auto processor = *SpanProcessor::Create({}, *OtlpHttpExporter::Create(std::move(options)));
  auto tracer = *Tracer::Create({}, processor.get());

  const std::optional<TraceContext> parent = ExtractTraceContext(
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rojo=00f067aa0ba902b7");
  StageClock clock;
  const int64_t t0 = Clock::Real()->NowNs();
  clock.Mark(Stage::kArrival, t0);
  clock.Mark(Stage::kDecoded, t0 + 10'000);
  clock.Mark(Stage::kPreprocessed, t0 + 20'000);
  clock.Mark(Stage::kQueueEnter, t0 + 21'000);
  clock.Mark(Stage::kQueueLeave, t0 + 50'000);
  clock.Mark(Stage::kInferStart, t0 + 52'000);
  clock.Mark(Stage::kInferEnd, t0 + 400'000);
  clock.Mark(Stage::kPostprocessed, t0 + 410'000);
  clock.Mark(Stage::kSent, t0 + 450'000);
  const TraceResult result = tracer->Finish(
      parent, RequestTraceInfo{.model = "resnet", .version = "1", .request_id = "r-1"}, clock);
  ASSERT_TRUE(result.submitted);
  ASSERT_TRUE(processor->Flush(absl::Seconds(10)));
  EXPECT_EQ(processor->exported_spans(), 7u);

  const std::vector<net::TestHttpServer::Request> requests = collector.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/v1/traces");
  EXPECT_EQ(requests[0].Header("content-type"), "application/json");

  simdjson::dom::parser parser;
  simdjson::dom::element body;
  ASSERT_EQ(parser.parse(requests[0].body).get(body), simdjson::SUCCESS) << requests[0].body;
  simdjson::dom::element resource_spans = body["resourceSpans"].at(0);
  std::map<std::string, std::string> resource;
  for (simdjson::dom::element attribute : resource_spans["resource"]["attributes"]) {
    resource[std::string(std::string_view(attribute["key"]))] =
        std::string(std::string_view(attribute["value"]["stringValue"]));
  }
  EXPECT_EQ(resource["service.name"], "brigade-test");
  simdjson::dom::array spans = resource_spans["scopeSpans"].at(0)["spans"];
  ASSERT_EQ(spans.size(), 7u);
  int roots = 0;
  for (simdjson::dom::element span : spans) {
    EXPECT_EQ(std::string_view(span["traceId"]), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_TRUE(IsLowerHex(std::string_view(span["spanId"]), 16));
    EXPECT_TRUE(span["kind"].is_int64());
    EXPECT_TRUE(span["startTimeUnixNano"].is_string());
    EXPECT_TRUE(span["endTimeUnixNano"].is_string());
    EXPECT_TRUE(span["status"]["code"].is_int64());
    EXPECT_EQ(std::string_view(span["traceState"]), "rojo=00f067aa0ba902b7");
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    ASSERT_TRUE(ParseInteger(std::string_view(span["startTimeUnixNano"]), &start_ns));
    ASSERT_TRUE(ParseInteger(std::string_view(span["endTimeUnixNano"]), &end_ns));
    EXPECT_LE(start_ns, end_ns);
    if (std::string_view(span["name"]) == "infer") {
      ++roots;
      EXPECT_EQ(int64_t(span["kind"]), 2);
      EXPECT_EQ(std::string_view(span["parentSpanId"]), "00f067aa0ba902b7");
      EXPECT_EQ(std::string_view(span["spanId"]), result.root_span_id.Hex());
      EXPECT_EQ(end_ns - start_ns, 450'000);
      // Wall-clock times near now.
      EXPECT_LT(std::abs(start_ns - WallNowNs()), int64_t{60} * 1'000'000'000);
    } else {
      EXPECT_EQ(std::string_view(span["parentSpanId"]), result.root_span_id.Hex());
    }
  }
  EXPECT_EQ(roots, 1);
}

TEST(OtlpHttpExporterTest, RetriesUnavailableThenSucceeds) {
  FakeCollector collector({503, 503});
  auto exporter = *OtlpHttpExporter::Create(FastOptions(collector.url()));
  const SpanData spans[] = {SpanData{.trace_id = NewTraceId(), .span_id = NewSpanId()}};
  EXPECT_TRUE(exporter->Export(spans).ok());
  EXPECT_EQ(collector.requests().size(), 3u);
}

TEST(OtlpHttpExporterTest, BadRequestIsNotRetried) {
  FakeCollector collector({400});
  auto exporter = *OtlpHttpExporter::Create(FastOptions(collector.url()));
  const SpanData spans[] = {SpanData{.trace_id = NewTraceId(), .span_id = NewSpanId()}};
  const absl::Status status = exporter->Export(spans);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("400"));
  EXPECT_EQ(collector.requests().size(), 1u);
}

TEST(OtlpHttpExporterTest, ReusesTheConnectionAcrossExports) {
  FakeCollector collector;
  auto exporter = *OtlpHttpExporter::Create(FastOptions(collector.url()));
  const SpanData spans[] = {SpanData{.trace_id = NewTraceId(), .span_id = NewSpanId()}};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(exporter->Export(spans).ok());
  EXPECT_EQ(collector.requests().size(), 5u);
  EXPECT_EQ(collector.connections(), 1);
}

TEST(OtlpHttpExporterTest, NoCollectorIsUnavailableAfterItsAttempts) {
  uint16_t port;
  {
    FakeCollector gone;
    port = static_cast<uint16_t>(std::stoi(gone.url().substr(17)));
  }
  auto exporter = *OtlpHttpExporter::Create(
      FastOptions("http://127.0.0.1:" + std::to_string(port) + "/v1/traces"));
  const SpanData spans[] = {SpanData{.trace_id = NewTraceId(), .span_id = NewSpanId()}};
  EXPECT_EQ(exporter->Export(spans).code(), absl::StatusCode::kUnavailable);
}

TEST(OtlpHttpExporterTest, CreateRejectsHttpsAndBadLimits) {
  EXPECT_FALSE(OtlpHttpExporter::Create(FastOptions("https://c:4318/v1/traces")).ok());
  OtlpHttpExporter::Options options = FastOptions("http://c:4318/v1/traces");
  options.max_attempts = 0;
  EXPECT_FALSE(OtlpHttpExporter::Create(options).ok());
}

TEST(OtlpOptionsFromEnvironmentTest, ReadsTheStandardVariables) {
  const std::map<std::string, std::string> env = {
      {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"},
      {"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
      {"OTEL_RESOURCE_ATTRIBUTES",
       "service.name=ignored, host.name = n1,deployment.environment=prod"},
      {"OTEL_SERVICE_NAME", "brigade-eu"},
  };
  const auto getenv = [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  const OtlpHttpExporter::Options options = OtlpOptionsFromEnvironment({}, getenv);
  EXPECT_EQ(options.endpoint, "http://collector:4318/v1/traces");
  EXPECT_EQ(options.timeout, absl::Milliseconds(2500));
  EXPECT_EQ(options.resource.service_name, "brigade-eu");
  EXPECT_THAT(
      options.resource.attributes,
      testing::ElementsAre(std::pair<std::string, std::string>("host.name", "n1"),
                           std::pair<std::string, std::string>("deployment.environment", "prod")));
}

}  // namespace
}  // namespace brigade::telemetry
