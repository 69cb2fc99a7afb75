#include "frontend/http/kserve_http_handler.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/strings.h"
#include "frontend/http/content_coding.h"
#include "frontend/http/http_server.h"
#include "frontend/http/metrics_http_handler.h"
#include "frontend/status_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "net/test_client.h"
#include "protocol/error_payload.h"
#include "spdlog/spdlog.h"
#include "testing/temp_repository.h"
#ifdef BRIGADE_HAVE_ONNX
#include "engine/onnx/test_util/onnx_builder.h"
#endif

namespace brigade::frontend {
namespace {

using net::testing::ClientResponse;
using net::testing::GetRequest;
using net::testing::PostRequest;
using net::testing::TestClient;
using ::testing::HasSubstr;
using ::testing::Not;

// Triton's "simple" request: INPUT0 = 7s, INPUT1 = 3s, one row of 16.
std::string AddSubJson(std::string_view extra = "") {
  std::string ones_row;
  auto row = [](int value) {
    std::string out = "[";
    for (int i = 0; i < 16; ++i) out += StrCat(i == 0 ? "" : ",", value);
    return out + "]";
  };
  return StrCat(R"({"id":"abc",)", extra, R"("inputs":[)",
                R"({"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[)", row(7), "]},",
                R"({"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":)", row(3), "}]}");
}

std::string Repeated(int value, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += StrCat(i == 0 ? "" : ",", value);
  return out;
}

class KServeHttpHandlerTest : public ::testing::Test {
 protected:
  void Start(ModelControlMode mode = ModelControlMode::kNone,
             std::vector<std::string> startup_models = {}) {
    InferenceServer::Options options;
    options.model_repository = repo_.path();
    options.control_mode = mode;
    options.startup_models = std::move(startup_models);
    options.pin_threads = false;
    auto server = InferenceServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);

    KServeHttpHandler::Options handler_options;
    handler_options.max_inflated_body_bytes = max_inflated_body_bytes_;
    handler_options.on_infer_sent = [this](const InferResponse& response, const SentInfo& sent) {
      absl::MutexLock lock(&mu_);
      sent_.push_back({response.clock, sent.ok});
    };
    auto handler = KServeHttpHandler::Create(server_.get(), std::move(handler_options));
    ASSERT_TRUE(handler.ok()) << handler.status();
    handler_ = *std::move(handler);

    HttpServer::Options http_options;
    http_options.address = "127.0.0.1";
    http_options.port = 0;
    auto http = HttpServer::Create(http_options, handler_.get());
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
    client_ = std::make_unique<TestClient>(http_->port());
  }

  ClientResponse Call(const std::string& request) {
    client_->Send(request);
    std::optional<ClientResponse> response = client_->Read();
    EXPECT_TRUE(response.has_value()) << request.substr(0, 80);
    return response.value_or(ClientResponse{});
  }

  struct Sent {
    StageClock clock;
    bool ok;
  };
  std::vector<Sent> WaitForSent(size_t count) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, count]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sent_.size() >= count; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Milliseconds(net::testing::kWaitMs));
    return sent_;
  }

  size_t max_inflated_body_bytes_ = size_t{64} << 20;
  brigade::testing::TempRepository repo_;
  // Declared before the server and the HTTP front end, so they outlive them: the front end's I/O
  // thread appends to sent_ until http_ is destroyed.
  absl::Mutex mu_;
  std::vector<Sent> sent_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<InferenceServer> server_;
  std::unique_ptr<KServeHttpHandler> handler_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(KServeHttpHandlerTest, HealthAnswersByStatusCode) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ClientResponse live = Call(GetRequest("/v2/health/live"));
  EXPECT_EQ(live.status, 200);
  EXPECT_EQ(live.body, "");
  EXPECT_EQ(Call(GetRequest("/v2/health/ready")).status, 200);
  server_->StartDrain();
  EXPECT_EQ(Call(GetRequest("/v2/health/ready")).status, 400);  // Triton's "not ready"
  EXPECT_EQ(Call(GetRequest("/v2/health/live")).status, 200);
}

TEST_F(KServeHttpHandlerTest, ServerAndModelMetadata) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ClientResponse server = Call(GetRequest("/v2"));
  EXPECT_EQ(server.status, 200);
  EXPECT_EQ(server.header("content-type"), "application/json");
  EXPECT_THAT(server.body, HasSubstr(R"("name":"brigade")"));
  EXPECT_THAT(server.body, HasSubstr(R"("binary_tensor_data")"));

  ClientResponse model = Call(GetRequest("/v2/models/simple"));
  EXPECT_EQ(model.status, 200);
  EXPECT_THAT(model.body, HasSubstr(R"("name":"simple","versions":["1"])"));
  EXPECT_THAT(model.body, HasSubstr(R"({"name":"INPUT0","datatype":"INT32","shape":[-1,16]})"));
  EXPECT_EQ(Call(GetRequest("/v2/models/simple/versions/1")).status, 200);

  ClientResponse missing = Call(GetRequest("/v2/models/nope"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(missing.body, HasSubstr(R"({"error":)"));
  EXPECT_THAT(missing.body, HasSubstr("nope"));
  EXPECT_EQ(Call(GetRequest("/v2/models/simple/versions/x")).status, 400);
}

TEST_F(KServeHttpHandlerTest, ModelReadiness) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  EXPECT_EQ(Call(GetRequest("/v2/models/simple/ready")).status, 200);
  EXPECT_EQ(Call(GetRequest("/v2/models/simple/versions/1/ready")).status, 200);
  // Not ready, unknown included, is Triton's 400 with a body naming the model, never a 404.
  ClientResponse unknown = Call(GetRequest("/v2/models/nope/ready"));
  EXPECT_EQ(unknown.status, 400);
  EXPECT_THAT(unknown.body, HasSubstr(R"({"error":"model 'nope' is not ready"})"));
  ClientResponse version = Call(GetRequest("/v2/models/simple/versions/7/ready"));
  EXPECT_EQ(version.status, 400);
  EXPECT_THAT(version.body, HasSubstr("model 'simple' version 7 is not ready"));
  EXPECT_EQ(Call(GetRequest("/v2/models/simple/versions/x/ready")).status, 400);
  server_->StartDrain();
  EXPECT_EQ(Call(GetRequest("/v2/models/simple/ready")).status, 503);
}

// Triton's logging extension, changing the process's logger at run time.
TEST_F(KServeHttpHandlerTest, LoggingReadsAndChangesTheLogLevel) {
  Start();
  ClientResponse read = Call(GetRequest("/v2/logging"));
  ASSERT_EQ(read.status, 200);
  EXPECT_THAT(read.body, HasSubstr(R"("log_info":true)"));

  ClientResponse quieter = Call(PostRequest("/v2/logging", R"({"log_info":false})"));
  ASSERT_EQ(quieter.status, 200) << quieter.body;
  EXPECT_THAT(quieter.body, HasSubstr(R"("log_info":false,"log_warning":true)"));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::warn);
  EXPECT_THAT(Call(GetRequest("/v2/logging")).body, HasSubstr(R"("log_info":false)"));

  ClientResponse hole = Call(PostRequest("/v2/logging", R"({"log_info":true,"log_error":false})"));
  EXPECT_EQ(hole.status, 400);
  EXPECT_THAT(hole.body, HasSubstr("log_warning with log_error off"));
  EXPECT_EQ(Call(PostRequest("/v2/logging", R"({"log_file":"/tmp/b.log"})")).status, 501);
  EXPECT_EQ(Call(PostRequest("/v2/logging", R"({"log_infos":true})")).status, 400);

  ASSERT_EQ(Call(PostRequest("/v2/logging", R"({"log_info":true})")).status, 200);
  EXPECT_EQ(spdlog::get_level(), spdlog::level::info);
}

TEST_F(KServeHttpHandlerTest, JsonInferenceRoundTrip) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ClientResponse response = Call(PostRequest("/v2/models/simple/infer", AddSubJson()));
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.header("content-type"), "application/json");
  EXPECT_THAT(response.body, HasSubstr(R"("model_name":"simple","model_version":"1","id":"abc")"));
  EXPECT_THAT(response.body,
              HasSubstr(StrCat(R"({"name":"OUTPUT0","datatype":"INT32",)",
                               R"("shape":[1,16],"data":[)", Repeated(10, 16), "]}")));
  EXPECT_THAT(response.body, HasSubstr(StrCat(R"("name":"OUTPUT1","datatype":"INT32",)",
                                              R"("shape":[1,16],"data":[)", Repeated(4, 16))));
}

TEST_F(KServeHttpHandlerTest, OnlyRequestedOutputsAreReturned) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ClientResponse response = Call(
      PostRequest("/v2/models/simple/infer", AddSubJson(R"("outputs":[{"name":"OUTPUT1"}],)")));
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_THAT(response.body, HasSubstr("OUTPUT1"));
  EXPECT_THAT(response.body, Not(HasSubstr("OUTPUT0")));
}

TEST_F(KServeHttpHandlerTest, BinaryInferenceRoundTrip) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  const std::string json =
      R"({"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}},)"
      R"({"name":"INPUT1","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}}],)"
      R"("parameters":{"binary_data_output":true}})";
  std::string body = json;
  std::vector<int32_t> a(16), b(16);
  for (int i = 0; i < 16; ++i) {
    a[i] = i;
    b[i] = 100 * i;
  }
  body.append(reinterpret_cast<const char*>(a.data()), 64);
  body.append(reinterpret_cast<const char*>(b.data()), 64);
  ClientResponse response =
      Call(PostRequest("/v2/models/simple/infer", body,
                       StrCat("Inference-Header-Content-Length: ", json.size(), "\r\n")));
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.header("content-type"), "application/octet-stream");
  const size_t header_length = std::stoul(response.header("inference-header-content-length"));
  ASSERT_EQ(response.body.size(), header_length + 128);
  const std::string header = response.body.substr(0, header_length);
  EXPECT_THAT(header, HasSubstr(R"("name":"OUTPUT0","datatype":"INT32","shape":[1,16],)"
                                R"("parameters":{"binary_data_size":64}})"));
  std::vector<int32_t> sum(16), difference(16);
  std::memcpy(sum.data(), response.body.data() + header_length, 64);
  std::memcpy(difference.data(), response.body.data() + header_length + 64, 64);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(sum[i], 101 * i);
    EXPECT_EQ(difference[i], -99 * i);
  }
}

TEST_F(KServeHttpHandlerTest, BadInferenceRequestsGetProtocolErrors) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ClientResponse malformed = Call(PostRequest("/v2/models/simple/infer", R"({"inputs":[)"));
  EXPECT_EQ(malformed.status, 400);
  EXPECT_THAT(malformed.body, HasSubstr(R"({"error":"malformed JSON)"));

  ClientResponse unknown = Call(PostRequest("/v2/models/nope/infer", AddSubJson()));
  EXPECT_EQ(unknown.status, 404);

  ClientResponse wrong_shape = Call(
      PostRequest("/v2/models/simple/infer",
                  R"({"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"INT32","data":[1,2]},)"
                  R"({"name":"INPUT1","shape":[1,2],"datatype":"INT32","data":[1,2]}]})"));
  EXPECT_EQ(wrong_shape.status, 400);
  EXPECT_THAT(wrong_shape.body, HasSubstr("INPUT0"));

  EXPECT_EQ(Call(PostRequest("/v2/models/simple/versions/abc/infer", AddSubJson())).status, 400);
  ClientResponse unknown_coding =
      Call(PostRequest("/v2/models/simple/infer", AddSubJson(), "Content-Encoding: br\r\n"));
  EXPECT_EQ(unknown_coding.status, 415);
  EXPECT_THAT(unknown_coding.body, HasSubstr("'br'"));
  ClientResponse not_gzip =
      Call(PostRequest("/v2/models/simple/infer", AddSubJson(), "Content-Encoding: gzip\r\n"));
  EXPECT_EQ(not_gzip.status, 400);
  EXPECT_THAT(not_gzip.body, HasSubstr("model 'simple'"));
  EXPECT_THAT(not_gzip.body, HasSubstr("not valid gzip data"));
  // The connection is still good after all of that.
  EXPECT_EQ(Call(PostRequest("/v2/models/simple/infer", AddSubJson())).status, 200);
}

#ifdef BRIGADE_HAVE_ONNX
TEST_F(KServeHttpHandlerTest, AnOptionalInputMayBeOmittedButARequiredOneMayNot) {
  // y = x + bias on the ONNX engine; `bias` is optional, its initializer [10,11,12,13] the
  // default a request that omits it runs with.
  repo_.AddModel("add_bias", brigade::testing::kAddBiasConfig);
  repo_.WriteFile("add_bias/1/model.onnx", engine::onnx::AddBiasGraph().Serialize());
  Start();
  constexpr char kX[] = R"({"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]})";
  constexpr char kBias[] =
      R"({"name":"bias","shape":[1,4],"datatype":"FP32","data":[100,100,100,100]})";

  ClientResponse omitted =
      Call(PostRequest("/v2/models/add_bias/infer", StrCat(R"({"inputs":[)", kX, "]}")));
  ASSERT_EQ(omitted.status, 200) << omitted.body;
  EXPECT_THAT(omitted.body, HasSubstr(R"("shape":[1,4],"data":[11,13,15,17])"));

  ClientResponse given = Call(
      PostRequest("/v2/models/add_bias/infer", StrCat(R"({"inputs":[)", kX, ",", kBias, "]}")));
  ASSERT_EQ(given.status, 200) << given.body;
  EXPECT_THAT(given.body, HasSubstr(R"("shape":[1,4],"data":[101,102,103,104])"));

  ClientResponse missing =
      Call(PostRequest("/v2/models/add_bias/infer", StrCat(R"({"inputs":[)", kBias, "]}")));
  EXPECT_EQ(missing.status, 400);
  EXPECT_THAT(missing.body, HasSubstr("model 'add_bias' is missing input 'x'"));
}
#endif  // BRIGADE_HAVE_ONNX

std::string Compressed(ContentCoding coding, std::string_view body) {
  const std::span<const std::byte> pieces[] = {
      std::as_bytes(std::span<const char>(body.data(), body.size()))};
  return DeflateBody(coding, pieces);
}

std::string Inflated(ContentCoding coding, std::string_view body) {
  absl::StatusOr<std::shared_ptr<protocol::http::BodyBuffer>> inflated = InflateBody(
      coding, std::as_bytes(std::span<const char>(body.data(), body.size())), size_t{64} << 20, 0);
  EXPECT_TRUE(inflated.ok()) << inflated.status();
  return inflated.ok() ? std::string((*inflated)->view()) : "";
}

TEST_F(KServeHttpHandlerTest, CompressedRequestBodiesAreInflatedBeforeDecoding) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  const ClientResponse plain = Call(PostRequest("/v2/models/simple/infer", AddSubJson()));
  ASSERT_EQ(plain.status, 200) << plain.body;
  for (ContentCoding coding : {ContentCoding::kGzip, ContentCoding::kDeflate}) {
    const ClientResponse response =
        Call(PostRequest("/v2/models/simple/infer", Compressed(coding, AddSubJson()),
                         StrCat("Content-Encoding: ", ContentCodingName(coding), "\r\n")));
    ASSERT_EQ(response.status, 200) << response.body;
    EXPECT_EQ(response.body, plain.body) << ContentCodingName(coding);
  }

  // Binary tensors: Inference-Header-Content-Length counts the uncompressed body.
  const std::string json =
      R"({"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}},)"
      R"({"name":"INPUT1","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}}]})";
  std::string body = json;
  std::vector<int32_t> a(16, 5), b(16, 2);
  body.append(reinterpret_cast<const char*>(a.data()), 64);
  body.append(reinterpret_cast<const char*>(b.data()), 64);
  const ClientResponse binary = Call(PostRequest(
      "/v2/models/simple/infer", Compressed(ContentCoding::kGzip, body),
      StrCat("Content-Encoding: gzip\r\nInference-Header-Content-Length: ", json.size(), "\r\n")));
  ASSERT_EQ(binary.status, 200) << binary.body;
  EXPECT_THAT(binary.body, HasSubstr(StrCat(R"("name":"OUTPUT0","datatype":"INT32",)",
                                            R"("shape":[1,16],"data":[)", Repeated(7, 16))));
}

TEST_F(KServeHttpHandlerTest, ACompressedBodyThatInflatesPastTheLimitGets413) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  max_inflated_body_bytes_ = 4096;
  Start();
  // 64 KiB of spaces after valid JSON: tiny compressed, far past the limit once inflated.
  const ClientResponse response =
      Call(PostRequest("/v2/models/simple/infer",
                       Compressed(ContentCoding::kGzip, AddSubJson() + std::string(65536, ' ')),
                       "Content-Encoding: gzip\r\n"));
  EXPECT_EQ(response.status, 413);
  EXPECT_THAT(response.body, HasSubstr("more than 4096 bytes"));
  // A body within the limit still works on the same connection.
  EXPECT_EQ(
      Call(PostRequest("/v2/models/simple/infer", Compressed(ContentCoding::kGzip, AddSubJson()),
                       "Content-Encoding: gzip\r\n"))
          .status,
      200);
}

TEST_F(KServeHttpHandlerTest, ResponsesAreCompressedWhenTheClientAcceptsItAndWorthIt) {
  repo_.AddModel("echo", brigade::testing::kIdentityConfig);
  Start();
  const std::string big_request =
      StrCat(R"({"inputs":[{"name":"INPUT0","shape":[1,1000],"datatype":"FP32","data":[)",
             Repeated(3, 1000), "]}]}");
  const ClientResponse plain = Call(PostRequest("/v2/models/echo/infer", big_request));
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(plain.headers.count("content-encoding"), 0u);
  ASSERT_GE(plain.body.size(), 1024u);

  const ClientResponse gzip = Call(
      PostRequest("/v2/models/echo/infer", big_request, "Accept-Encoding: br;q=1, gzip;q=0.8\r\n"));
  ASSERT_EQ(gzip.status, 200);
  EXPECT_EQ(gzip.header("content-encoding"), "gzip");
  EXPECT_EQ(gzip.header("vary"), "Accept-Encoding");
  EXPECT_LT(gzip.body.size(), plain.body.size() / 4);
  EXPECT_EQ(Inflated(ContentCoding::kGzip, gzip.body), plain.body);

  const ClientResponse deflate = Call(
      PostRequest("/v2/models/echo/infer", big_request, "Accept-Encoding: gzip;q=0, deflate\r\n"));
  ASSERT_EQ(deflate.status, 200);
  EXPECT_EQ(deflate.header("content-encoding"), "deflate");
  EXPECT_EQ(Inflated(ContentCoding::kDeflate, deflate.body), plain.body);

  // Below 1 KiB the answer goes as it is, whatever the client accepts.
  const ClientResponse small = Call(
      PostRequest("/v2/models/echo/infer",
                  R"({"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"FP32","data":[1,2]}]})",
                  "Accept-Encoding: gzip\r\n"));
  ASSERT_EQ(small.status, 200);
  EXPECT_EQ(small.headers.count("content-encoding"), 0u);
  EXPECT_THAT(small.body, HasSubstr(R"("data":[1,2])"));
}

TEST_F(KServeHttpHandlerTest, ReportsStageStampsOnceWritten) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ASSERT_EQ(Call(PostRequest("/v2/models/simple/infer", AddSubJson())).status, 200);
  std::vector<Sent> sent = WaitForSent(1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].ok);
  const StageClock& clock = sent[0].clock;
  EXPECT_GT(clock.at(Stage::kArrival), 0);
  EXPECT_GT(clock.at(Stage::kPreprocessed), 0);
  EXPECT_GT(clock.at(Stage::kSent), 0);
  EXPECT_LE(clock.at(Stage::kArrival), clock.at(Stage::kPreprocessed));
  EXPECT_LE(clock.at(Stage::kPreprocessed), clock.at(Stage::kSent));
}

TEST_F(KServeHttpHandlerTest, ConfigAndStatistics) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ClientResponse config = Call(GetRequest("/v2/models/simple/config"));
  ASSERT_EQ(config.status, 200);
  EXPECT_THAT(config.body, HasSubstr(R"("name":"simple")"));
  EXPECT_THAT(config.body, HasSubstr(R"("max_batch_size":8)"));
  EXPECT_THAT(config.body,
              HasSubstr(R"("data_type":"TYPE_INT32","format":"FORMAT_NONE","dims":[16])"));

  ASSERT_EQ(Call(PostRequest("/v2/models/simple/infer", AddSubJson())).status, 200);
  ClientResponse stats = Call(GetRequest("/v2/models/simple/stats"));
  ASSERT_EQ(stats.status, 200);
  EXPECT_THAT(stats.body, HasSubstr(R"({"model_stats":[{"name":"simple","version":"1")"));
  EXPECT_THAT(stats.body, HasSubstr(R"("success":{"count":1,)"));
  EXPECT_THAT(Call(GetRequest("/v2/models/stats")).body, HasSubstr(R"("name":"simple")"));
  EXPECT_EQ(Call(GetRequest("/v2/models/nope/stats")).status, 404);
}

TEST_F(KServeHttpHandlerTest, RepositoryIndexLoadAndUnload) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  repo_.AddModel("identity", brigade::testing::kIdentityConfig);
  Start(ModelControlMode::kExplicit, {"simple"});
  ClientResponse index = Call(PostRequest("/v2/repository/index", ""));
  ASSERT_EQ(index.status, 200);
  EXPECT_THAT(index.body, HasSubstr(R"({"name":"simple","version":"1","state":"READY"})"));
  EXPECT_THAT(index.body, HasSubstr(R"("name":"identity")"));
  ClientResponse ready_only = Call(PostRequest("/v2/repository/index", R"({"ready":true})"));
  EXPECT_THAT(ready_only.body, Not(HasSubstr("identity")));

  EXPECT_NE(Call(GetRequest("/v2/models/identity/ready")).status, 200);
  ClientResponse load = Call(PostRequest("/v2/repository/models/identity/load", ""));
  EXPECT_EQ(load.status, 200) << load.body;
  EXPECT_EQ(Call(GetRequest("/v2/models/identity/ready")).status, 200);

  ClientResponse unload = Call(PostRequest("/v2/repository/models/simple/unload",
                                           R"({"parameters":{"unload_dependents":false}})"));
  EXPECT_EQ(unload.status, 200) << unload.body;
  EXPECT_NE(Call(GetRequest("/v2/models/simple/ready")).status, 200);

  ClientResponse bad = Call(PostRequest("/v2/repository/models/identity/load",
                                        R"({"parameters":{"file:1/model.onnx":"AA=="}})"));
  EXPECT_EQ(bad.status, 501);
  EXPECT_THAT(bad.body, HasSubstr("file:1/model.onnx"));
  EXPECT_GE(Call(PostRequest("/v2/repository/models/missing/load", "")).status, 400);
}

TEST_F(KServeHttpHandlerTest, MetricsCountEachAnsweredRequestOnceWritten) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ASSERT_EQ(Call(PostRequest("/v2/models/simple/infer", AddSubJson())).status, 200);
  ASSERT_EQ(Call(PostRequest("/v2/models/simple/infer", "{oops")).status, 400);
  // Requests are reported after their last byte is written, which may be a moment after the
  // client has read it. One that failed before a version was chosen counts under the newest.
  const std::string success =
      R"(brigade_requests_total{model="simple",version="1",protocol="http",outcome="success"} 1)";
  const std::string error =
      R"(brigade_requests_total{model="simple",version="1",protocol="http",outcome="error"} 1)";
  ClientResponse metrics;
  for (int attempt = 0; attempt < 200; ++attempt) {
    metrics = Call(GetRequest("/metrics"));
    if (metrics.body.find(error) != std::string::npos) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.header("content-type"), HasSubstr("text/plain; version=0.0.4"));
  EXPECT_THAT(metrics.body, HasSubstr(success));
  EXPECT_THAT(metrics.body, HasSubstr(error));
  EXPECT_THAT(metrics.body,
              HasSubstr(R"(brigade_request_stage_duration_seconds_count{model="simple",)"
                        R"(version="1",protocol="http",stage="compute"} 1)"));
}

TEST_F(KServeHttpHandlerTest, DashboardIsServedAtTheRoot) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ClientResponse page = Call(GetRequest("/"));
  ASSERT_EQ(page.status, 200);
  EXPECT_THAT(page.header("content-type"), HasSubstr("text/html"));
  EXPECT_THAT(page.body, HasSubstr("<script"));
}

TEST_F(KServeHttpHandlerTest, CacheInvalidationDropsCachedAnswers) {
  repo_.AddModel("simple", std::string(brigade::testing::kAddSubConfig) +
                               "\nresponse_cache { enable: true }\n");
  Start();
  const std::string hit = R"("cache_hit":true)";
  EXPECT_THAT(Call(PostRequest("/v2/models/simple/infer", AddSubJson())).body, Not(HasSubstr(hit)));
  // The answer is stored just after it was sent: repeat until it comes from the cache (bounded).
  bool seen = false;
  for (int attempt = 0; attempt < 200 && !seen; ++attempt) {
    seen = Call(PostRequest("/v2/models/simple/infer", AddSubJson())).body.find(hit) !=
           std::string::npos;
    if (!seen) absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_TRUE(seen);
  ClientResponse invalidated =
      Call(PostRequest("/v2/cache/invalidate", R"({"model_name":"simple"})"));
  EXPECT_EQ(invalidated.status, 200) << invalidated.body;
  EXPECT_THAT(Call(PostRequest("/v2/models/simple/infer", AddSubJson())).body, Not(HasSubstr(hit)));
  // No body: everything.
  EXPECT_EQ(Call(PostRequest("/v2/cache/invalidate", "")).status, 200);
  EXPECT_THAT(Call(PostRequest("/v2/models/simple/infer", AddSubJson())).body, Not(HasSubstr(hit)));

  ClientResponse bad = Call(PostRequest("/v2/cache/invalidate", R"({"model_version":"1"})"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("model_name"));
  EXPECT_EQ(Call(PostRequest("/v2/cache/invalidate", "[1,2")).status, 400);
}

TEST_F(KServeHttpHandlerTest, TheMetricsPortServesOnlyMetrics) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  MetricsHttpHandler metrics_handler(server_.get());
  HttpServer::Options options;
  options.address = "127.0.0.1";
  options.port = 0;
  auto metrics_server = HttpServer::Create(options, &metrics_handler);
  ASSERT_TRUE(metrics_server.ok()) << metrics_server.status();
  TestClient client((*metrics_server)->port());
  auto call = [&client](const std::string& request) {
    client.Send(request);
    return client.Read().value_or(ClientResponse{});
  };
  ClientResponse metrics = call(GetRequest("/metrics"));
  EXPECT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.body, HasSubstr("brigade_requests_in_flight{model=\"simple\""));
  EXPECT_EQ(call(GetRequest("/v2/health/ready")).status, 404);
  EXPECT_EQ(call(PostRequest("/v2/models/simple/infer", AddSubJson())).status, 404);
  ClientResponse post = call(PostRequest("/metrics", "{}"));
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("allow"), "GET, HEAD");
}

TEST_F(KServeHttpHandlerTest, UnknownPathsAndWrongMethods) {
  repo_.AddModel("simple", brigade::testing::kAddSubConfig);
  Start();
  ClientResponse missing = Call(GetRequest("/v3/anything"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(missing.body, HasSubstr(R"({"error":"no endpoint at '/v3/anything'"})"));
  ClientResponse wrong = Call(GetRequest("/v2/models/simple/infer"));
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.header("allow"), "POST");
}

TEST(ErrorResponseTest, MapsStatusAndRetryAfter) {
  HttpResponse not_found = ErrorResponse(absl::NotFoundError("model 'x' not found"));
  EXPECT_EQ(not_found.status, 404);
  EXPECT_EQ(not_found.body, R"({"error":"model 'x' not found"})");

  HttpResponse unavailable =
      ErrorResponse(protocol::WithRetryAfter(absl::UnavailableError("queue full"), 3));
  EXPECT_EQ(unavailable.status, 503);
  ASSERT_EQ(unavailable.headers.size(), 2u);
  EXPECT_EQ(unavailable.headers[1].name, "Retry-After");
  EXPECT_EQ(unavailable.headers[1].value, "3");

  EXPECT_EQ(ErrorResponse(absl::UnavailableError("no hint")).headers.size(), 1u);
}

}  // namespace
}  // namespace brigade::frontend
