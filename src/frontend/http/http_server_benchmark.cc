// Per-request cost of the HTTP front end over loopback. Prints; asserts nothing (not a test).
//
//   serve_http_benchmark [--stack=codec|full] [--requests=N] [--binary]
//       one process: server + a sequential keep-alive client; prints latency percentiles, and
//       the in-process cost of decode + encode alone.
//   serve_http_benchmark --mode=serve [--stack=...] [--requests=N] [--port=P]
//       server only; exits after N inference requests (for callgrind or wrk).
//   serve_http_benchmark --mode=client --port=P [--requests=N] [--binary]
//       client only.
//
// Stacks: "codec" = transport + codec with a handler that decodes the request, echoes its inputs
// as outputs and encodes the answer (no InferenceServer); "full" = KServeHttpHandler +
// InferenceServer with the builtin identity model (queue, batcher, instance thread included).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "core/strings.h"
#include "frontend/http/http_server.h"
#include "frontend/http/kserve_http_handler.h"
#include "net/test_client.h"
#include "protocol/http/infer_request_json.h"
#include "protocol/http/infer_response_json.h"
#include "testing/temp_repository.h"

namespace brigade::frontend {
namespace {

using protocol::http::BodyBuffer;
using protocol::http::DecodeInferRequest;
using protocol::http::EncodedInferResponse;
using protocol::http::EncodeInferResponse;
using protocol::http::HttpInferInput;
using protocol::http::kInferenceHeaderContentLength;
using protocol::http::OutputEncoding;

struct Flags {
  std::string mode = "bench";
  std::string stack = "codec";
  int requests = 20000;
  int port = 0;
  bool binary = false;
};

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](std::string_view name) -> std::optional<std::string_view> {
      if (arg.starts_with(name) && arg.size() > name.size() && arg[name.size()] == '=') {
        return arg.substr(name.size() + 1);
      }
      return std::nullopt;
    };
    if (auto v = value("--mode")) flags.mode = *v;
    if (auto v = value("--stack")) flags.stack = *v;
    if (auto v = value("--requests")) flags.requests = std::atoi(std::string(*v).c_str());
    if (auto v = value("--port")) flags.port = std::atoi(std::string(*v).c_str());
    if (arg == "--binary") flags.binary = true;
  }
  return flags;
}

// A small inference request: FP32 [1,16], as JSON or with the binary extension.
struct InferBody {
  std::string body;
  std::string extra_headers;
};
InferBody MakeBody(bool binary) {
  InferBody out;
  if (!binary) {
    std::string data;
    for (int i = 0; i < 16; ++i) data += StrCat(i == 0 ? "" : ",", i * 0.25);
    out.body = StrCat(R"({"id":"b","inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32",)",
                      R"("data":[)", data, "]}]}");
    return out;
  }
  const std::string json =
      R"({"id":"b","inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32",)"
      R"("parameters":{"binary_data_size":64}}],"parameters":{"binary_data_output":true}})";
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[i] = i * 0.25f;
  out.body = json;
  out.body.append(reinterpret_cast<const char*>(values.data()), 64);
  out.extra_headers = StrCat("Inference-Header-Content-Length: ", json.size(), "\r\n");
  return out;
}

// Transport + codec, no server: decode, echo inputs as outputs, encode.
class CodecEchoHandler : public HttpHandler {
 public:
  explicit CodecEchoHandler(int exit_after) : exit_after_(exit_after) {}

  void Handle(HttpRequest request, HttpResponder responder) override {
    HttpInferInput input;
    input.model_name = "identity";
    input.header_length = request.Header(kInferenceHeaderContentLength);
    input.body = request.body;
    input.arrival_ns = request.arrival_ns;
    absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodeInferRequest(input);
    if (!decoded.ok()) {
      responder.Send(HttpResponse::Json(400, "{}"));
      return;
    }
    auto response = std::make_shared<InferResponse>();
    response->model_name = "identity";
    response->model_version = "1";
    response->id = (*decoded)->id;
    for (InferInput& in : (*decoded)->inputs) {
      response->outputs.push_back({"OUTPUT0", std::move(in.tensor), {}});
    }
    absl::StatusOr<EncodedInferResponse> encoded =
        EncodeInferResponse(*response, OutputEncoding::FromRequest(**decoded));
    HttpResponse http;
    http.headers.push_back(
        {"Content-Type", encoded->binary ? "application/octet-stream" : "application/json"});
    if (encoded->binary) {
      http.headers.push_back(
          {std::string(kInferenceHeaderContentLength), std::to_string(encoded->json.size())});
      http.body_parts = std::move(encoded->binary_parts);
      http.body_owner = response;
    }
    http.body = std::move(encoded->json);
    responder.Send(std::move(http));
    if (++handled_ == exit_after_) done_.Notify();
  }

  absl::Notification& done() { return done_; }

 private:
  const int exit_after_;
  std::atomic<int> handled_{0};
  absl::Notification done_;
};

struct Stack {
  std::unique_ptr<brigade::testing::TempRepository> repo;
  std::unique_ptr<InferenceServer> server;
  std::unique_ptr<HttpHandler> handler;
  CodecEchoHandler* echo = nullptr;
  std::unique_ptr<HttpServer> http;
  absl::Notification full_done;
  std::atomic<int> full_handled{0};
};

std::unique_ptr<Stack> StartStack(const Flags& flags) {
  auto stack = std::make_unique<Stack>();
  if (flags.stack == "full") {
    stack->repo = std::make_unique<brigade::testing::TempRepository>();
    stack->repo->AddModel("identity", brigade::testing::kIdentityConfig);
    InferenceServer::Options options;
    options.model_repository = stack->repo->path();
    options.pin_threads = false;
    auto server = InferenceServer::Create(options);
    if (!server.ok()) {
      std::fprintf(stderr, "server: %s\n", std::string(server.status().message()).c_str());
      std::exit(1);
    }
    stack->server = *std::move(server);
    KServeHttpHandler::Options handler_options;
    Stack* raw = stack.get();
    const int exit_after = flags.requests;
    handler_options.on_infer_sent = [raw, exit_after](const InferResponse&, const SentInfo&) {
      if (++raw->full_handled == exit_after) raw->full_done.Notify();
    };
    stack->handler = *KServeHttpHandler::Create(stack->server.get(), handler_options);
  } else {
    auto echo = std::make_unique<CodecEchoHandler>(flags.requests);
    stack->echo = echo.get();
    stack->handler = std::move(echo);
  }
  HttpServer::Options http_options;
  http_options.address = "127.0.0.1";
  http_options.port = flags.port;
  auto http = HttpServer::Create(http_options, stack->handler.get());
  if (!http.ok()) {
    std::fprintf(stderr, "http: %s\n", std::string(http.status().message()).c_str());
    std::exit(1);
  }
  stack->http = *std::move(http);
  return stack;
}

void RunClient(int port, const Flags& flags, bool quiet) {
  const InferBody body = MakeBody(flags.binary);
  const std::string request =
      net::testing::PostRequest("/v2/models/identity/infer", body.body, body.extra_headers);
  net::testing::TestClient client(port);
  std::vector<double> latencies_us;
  latencies_us.reserve(static_cast<size_t>(flags.requests));
  for (int i = 0; i < flags.requests; ++i) {
    const auto start = std::chrono::steady_clock::now();
    client.Send(request);
    std::optional<net::testing::ClientResponse> response = client.Read(/*timeout_ms=*/60'000);
    const auto end = std::chrono::steady_clock::now();
    if (!response || response->status != 200) {
      std::fprintf(stderr, "request %d failed (%d): %s\n", i, response ? response->status : 0,
                   response ? response->body.c_str() : "no answer");
      std::exit(1);
    }
    latencies_us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  if (quiet) return;
  std::sort(latencies_us.begin(), latencies_us.end());
  double sum = 0;
  for (double l : latencies_us) sum += l;
  auto at = [&](double q) {
    return latencies_us[static_cast<size_t>(q * (latencies_us.size() - 1))];
  };
  std::printf("%s %s, %d sequential requests on one connection (%zu-byte request):\n",
              flags.stack.c_str(), flags.binary ? "binary" : "json", flags.requests,
              request.size());
  std::printf("  round trip us: p50 %.1f  p90 %.1f  p99 %.1f  mean %.1f  => %.0f req/s\n", at(0.5),
              at(0.9), at(0.99), sum / latencies_us.size(), 1e6 * latencies_us.size() / sum);
}

void RunCodecOnly(const Flags& flags) {
  const InferBody body = MakeBody(flags.binary);
  auto buffer = BodyBuffer::FromString(body.body);
  const std::string header_length =
      flags.binary
          ? body.extra_headers.substr(body.extra_headers.find(':') + 2,
                                      body.extra_headers.size() - body.extra_headers.find(':') - 4)
          : "";
  const int iterations = flags.requests * 5;
  const auto start = std::chrono::steady_clock::now();
  size_t bytes = 0;
  for (int i = 0; i < iterations; ++i) {
    HttpInferInput input;
    input.model_name = "identity";
    if (flags.binary) input.header_length = header_length;
    input.body = buffer;
    auto decoded = DecodeInferRequest(input);
    InferResponse response;
    response.model_name = "identity";
    response.model_version = "1";
    response.outputs.push_back({"OUTPUT0", (*decoded)->inputs[0].tensor, {}});
    auto encoded = EncodeInferResponse(response, OutputEncoding::FromRequest(**decoded));
    bytes += encoded->json.size();
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("  codec only (decode + encode, no sockets): %.0f ns/request (%zu bytes out)\n",
              ns / iterations, bytes / iterations);
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  if (flags.mode == "client") {
    RunClient(flags.port, flags, /*quiet=*/false);
    return 0;
  }
  std::unique_ptr<Stack> stack = StartStack(flags);
  if (flags.mode == "serve") {
    std::printf("%d\n", stack->http->port());
    std::fflush(stdout);
    if (stack->echo != nullptr) {
      stack->echo->done().WaitForNotification();
    } else {
      stack->full_done.WaitForNotification();
    }
    stack->http->Shutdown(absl::Seconds(1));
    return 0;
  }
  Flags warmup = flags;
  warmup.requests = std::min(flags.requests, 2000);
  RunClient(stack->http->port(), warmup, /*quiet=*/true);
  RunClient(stack->http->port(), flags, /*quiet=*/false);
  RunCodecOnly(flags);
  stack->http->Shutdown(absl::Seconds(1));
  return 0;
}

}  // namespace
}  // namespace brigade::frontend

int main(int argc, char** argv) { return brigade::frontend::Main(argc, argv); }
