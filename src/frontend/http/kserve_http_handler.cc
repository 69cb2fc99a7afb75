#include "frontend/http/kserve_http_handler.h"

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/cord.h"
#include "core/strings.h"
#include "frontend/http/content_coding.h"
#include "frontend/http/http_access.h"
#include "frontend/http/kserve_extensions.h"
#include "frontend/http/kserve_route.h"
#include "frontend/request_report.h"
#include "frontend/status_map.h"
#include "protocol/error_payload.h"
#include "protocol/http/infer_request_json.h"
#include "protocol/http/infer_response_json.h"
#include "protocol/http/log_settings_json.h"
#include "protocol/http/metadata_json.h"
#include "protocol/http/model_config_json.h"
#include "protocol/http/repository_json.h"
#include "protocol/http/statistics_json.h"
#include "protocol/model_version.h"
#include "telemetry/dashboard_page.h"
#include "telemetry/prometheus_text.h"
#include "telemetry/trace_context.h"

namespace brigade::frontend {
namespace {

// The bodies are the protocol's (protocol/http); this file routes them.
using protocol::ParseModelVersion;
using protocol::http::BodyBuffer;
using protocol::http::CacheInvalidateRequest;
using protocol::http::DecodeCacheInvalidateRequest;
using protocol::http::DecodeInferRequest;
using protocol::http::DecodeLoadModelRequest;
using protocol::http::DecodeLogSettingsRequest;
using protocol::http::DecodeRepositoryIndexRequest;
using protocol::http::DecodeUnloadModelRequest;
using protocol::http::EncodedInferResponse;
using protocol::http::EncodeError;
using protocol::http::EncodeInferResponse;
using protocol::http::EncodeLogSettings;
using protocol::http::EncodeModelConfig;
using protocol::http::EncodeModelMetadata;
using protocol::http::EncodeRepositoryIndex;
using protocol::http::EncodeServerMetadata;
using protocol::http::EncodeStatistics;
using protocol::http::HttpInferInput;
using protocol::http::kInferenceHeaderContentLength;
using protocol::http::OutputEncoding;

using InferSentCallback = std::function<void(const InferResponse&, const SentInfo&)>;

// How long a cache invalidation waits for Redis before answering with its error.
constexpr absl::Duration kInvalidateWait = absl::Seconds(2);
// Answers smaller than this go uncompressed whatever Accept-Encoding says (RFC 9110 lets a server
// choose identity): gzip's framing alone is 18 bytes, and a small body gains nothing worth the
// time on a latency-first path.
constexpr size_t kMinCompressedBytes = 1024;

// The operation access control knows each endpoint as.
auth::Operation OperationOf(const KServeRoute& route) {
  switch (route.endpoint) {
    case KServeEndpoint::kServerMetadata:
      return auth::Operation::kServerMetadata;
    case KServeEndpoint::kServerLive:
      return auth::Operation::kServerLive;
    case KServeEndpoint::kServerReady:
      return auth::Operation::kServerReady;
    case KServeEndpoint::kModelMetadata:
      return auth::Operation::kModelMetadata;
    case KServeEndpoint::kModelReady:
      return auth::Operation::kModelReady;
    case KServeEndpoint::kModelInfer:
      return auth::Operation::kModelInfer;
    case KServeEndpoint::kModelConfig:
      return auth::Operation::kModelConfig;
    case KServeEndpoint::kModelStats:
      return auth::Operation::kModelStatistics;
    case KServeEndpoint::kRepositoryIndex:
      return auth::Operation::kRepositoryIndex;
    case KServeEndpoint::kRepositoryLoad:
      return auth::Operation::kRepositoryLoad;
    case KServeEndpoint::kRepositoryUnload:
      return auth::Operation::kRepositoryUnload;
    case KServeEndpoint::kLogging:
      return auth::Operation::kLogSettings;
    case KServeEndpoint::kTraceSetting:
      return auth::Operation::kTraceSettings;
    case KServeEndpoint::kSharedMemoryStatus:
      return auth::Operation::kSharedMemoryStatus;
    case KServeEndpoint::kSharedMemoryRegister:
    case KServeEndpoint::kSharedMemoryUnregister:
      return auth::Operation::kSharedMemoryRegister;
    case KServeEndpoint::kMetrics:
      return auth::Operation::kMetrics;
    case KServeEndpoint::kDashboard:
      return auth::Operation::kDashboard;
    case KServeEndpoint::kCacheInvalidate:
      return auth::Operation::kCacheInvalidate;
  }
  return auth::Operation::kRepositoryLoad;
}

// A status-code-only answer (health, readiness, load/unload success), as Triton sends them.
HttpResponse CodeOnly(int status) {
  HttpResponse response;
  response.status = status;
  return response;
}

HttpResponse TrueOrBadRequest(bool value) { return CodeOnly(value ? 200 : 400); }

// A model that is not ready, unknown ones included, is a 400 with an error body naming it, as
// Triton answers; clients read only the status code, people read the body.
HttpResponse ModelReadyAnswer(bool ready, std::string_view model, std::string_view version) {
  if (ready) return CodeOnly(200);
  const std::string which = version.empty() ? StrCat("model '", model, "'")
                                            : StrCat("model '", model, "' version ", version);
  return HttpResponse::Json(400, EncodeError(StrCat(which, " is not ready")));
}

template <typename T, typename Encode>
HttpResponse JsonOrError(const absl::StatusOr<T>& result, Encode encode) {
  if (!result.ok()) return ErrorResponse(result.status());
  return HttpResponse::Json(200, encode(*result));
}

// What the observer needs to know about one inference request besides its response, kept from
// arrival until the answer is written.
//
// Lifetime: held by value and moved along with the request, never shared, so exactly one owner
// has it at any time: HandleInfer → the request's on_complete (or, for a body that does not
// decode, straight to the error response's on_sent) → the SendFrom task → BuildInferResponse →
// the on_sent of the response built, which the transport calls once on the connection's io
// thread, after the last byte was written or writing failed, and then destroys. A closure dropped
// unrun (a request dropped, a connection gone before its answer was built) destroys the report
// with it; nothing else points at it. Each of those closures is larger than absl::AnyInvocable's
// inline buffer and so heap-stored anyway: the report rides along without an allocation of its own
// (it was a make_shared per request).
struct InferReport {
  RequestObserver* observer = nullptr;
  RequestReport request;  // names as the URL gave them; arrival and decode stamps
  std::optional<telemetry::TraceContext> parent;
};

// Reports one finished request at t5 (or when its answer could not be written).
void ReportSent(InferReport& report, const absl::Status& status, int http_status,
                const SentInfo& sent) {
  report.request.clock.MarkOnce(Stage::kArrival, sent.arrival_ns);
  report.request.status = status;
  ReportRequestDone(report.observer, &report.request,
                    {.protocol = Protocol::kHttp,
                     .protocol_code = http_status,
                     .written = sent.ok,
                     .sent_ns = sent.sent_ns,
                     .parent = &report.parent,
                     .unwritten_code = absl::StatusCode::kUnavailable,
                     .unwritten_message = "the client left before the answer was written"});
}

// An error answer to an inference request, reported when written.
HttpResponse InferErrorResponse(const absl::Status& status, InferReport report) {
  HttpResponse response = ErrorResponse(status);
  response.on_sent = [report = std::move(report), status,
                      http_status = response.status](const SentInfo& sent) mutable {
    ReportSent(report, status, http_status, sent);
  };
  return response;
}

// Runs on the connection's io thread once the server answered an inference request.
// Compresses a built answer in `coding` (the client's Accept-Encoding), unless it is small enough
// that a compressed copy would save nothing worth the time.
void CompressResponse(ContentCoding coding, HttpResponse* response) {
  if (coding == ContentCoding::kIdentity || response->content_length() < kMinCompressedBytes) {
    return;
  }
  std::vector<std::span<const std::byte>> pieces;
  pieces.reserve(1 + response->body_parts.size());
  pieces.push_back(std::as_bytes(std::span<const char>(response->body)));
  pieces.insert(pieces.end(), response->body_parts.begin(), response->body_parts.end());
  response->body = DeflateBody(coding, pieces);
  response->body_parts.clear();
  response->headers.push_back({"Content-Encoding", std::string(ContentCodingName(coding))});
  response->headers.push_back({"Vary", "Accept-Encoding"});
}

HttpResponse BuildInferResponse(absl::StatusOr<InferResponse> result,
                                const OutputEncoding& encoding, ContentCoding coding,
                                int64_t arrival_ns,
                                const std::shared_ptr<const InferSentCallback>& on_sent,
                                InferReport report) {
  if (!result.ok()) return InferErrorResponse(result.status(), std::move(report));
  // Shared: the response's tensors back the binary body parts until they are written.
  auto owned = std::make_shared<InferResponse>(*std::move(result));
  owned->clock.MarkOnce(Stage::kArrival, arrival_ns);
  absl::StatusOr<EncodedInferResponse> encoded = EncodeInferResponse(*owned, encoding);
  if (!encoded.ok()) return InferErrorResponse(encoded.status(), std::move(report));
  HttpResponse response;
  if (encoded->binary) {
    response.headers.push_back({"Content-Type", "application/octet-stream"});
    response.headers.push_back(
        {std::string(kInferenceHeaderContentLength), std::to_string(encoded->json.size())});
    response.body_parts = std::move(encoded->binary_parts);
    response.body_owner = owned;
  } else {
    response.headers.push_back({"Content-Type", "application/json"});
  }
  response.body = std::move(encoded->json);
  CompressResponse(coding, &response);
  response.on_sent = [owned, on_sent, report = std::move(report)](const SentInfo& sent) mutable {
    if (sent.ok) owned->clock.Mark(Stage::kSent, sent.sent_ns);
    if (*on_sent) (*on_sent)(*owned, sent);
    report.request.TakeResponse(*owned);
    ReportSent(report, absl::OkStatus(), 200, sent);
  };
  return response;
}

}  // namespace

HttpResponse ErrorResponse(const absl::Status& status) {
  HttpResponse response =
      HttpResponse::Json(HttpStatusFor(status), EncodeError(ToStd(status.message())));
  if (std::optional<std::string> retry_after = protocol::RetryAfterSeconds(status)) {
    response.headers.push_back({"Retry-After", *std::move(retry_after)});
  }
  return response;
}

absl::StatusOr<std::unique_ptr<KServeHttpHandler>> KServeHttpHandler::Create(
    InferenceServer* server, Options options) {
  if (server == nullptr) return absl::InvalidArgumentError("server must not be null");
  if (options.max_queued_repository_requests == 0) {
    return absl::InvalidArgumentError("max_queued_repository_requests must be > 0");
  }
  if (options.max_inflated_body_bytes == 0) {
    return absl::InvalidArgumentError("max_inflated_body_bytes must be > 0");
  }
  return std::make_unique<KServeHttpHandler>(server, std::move(options));
}

KServeHttpHandler::KServeHttpHandler(InferenceServer* server)
    : KServeHttpHandler(server, Options()) {}

KServeHttpHandler::KServeHttpHandler(InferenceServer* server, Options options)
    : server_(server),
      options_(std::move(options)),
      on_sent_(std::make_shared<const InferSentCallback>(options_.on_infer_sent)),
      repository_worker_(options_.max_queued_repository_requests),
      cache_worker_(options_.max_queued_repository_requests) {}

void KServeHttpHandler::Handle(HttpRequest request, HttpResponder responder) {
  std::variant<KServeRoute, RouteError> matched = MatchKServeRoute(request.method, request.path());
  if (const RouteError* error = std::get_if<RouteError>(&matched)) {
    HttpResponse response = HttpResponse::Json(error->http_status, EncodeError(error->message));
    if (!error->allow.empty()) response.headers.push_back({"Allow", error->allow});
    responder.Send(std::move(response));
    return;
  }
  const KServeRoute& route = std::get<KServeRoute>(matched);
  if (std::optional<HttpResponse> refused =
          RefuseHttp(options_.access_gate, request, OperationOf(route))) {
    responder.Send(*std::move(refused));
    return;
  }
  absl::StatusOr<int64_t> version = ParseModelVersion(route.version);
  if (!version.ok()) {
    responder.Send(ErrorResponse(version.status()));
    return;
  }
  switch (route.endpoint) {
    case KServeEndpoint::kServerLive:
      responder.Send(TrueOrBadRequest(server_->IsLive()));
      return;
    case KServeEndpoint::kServerReady:
      responder.Send(TrueOrBadRequest(server_->IsReady()));
      return;
    case KServeEndpoint::kServerMetadata:
      responder.Send(HttpResponse::Json(200, EncodeServerMetadata(AdvertisedMetadata(
                                                 server_->Metadata(), options_.shared_memory))));
      return;
    case KServeEndpoint::kModelMetadata:
      responder.Send(
          JsonOrError(server_->GetModelMetadata(route.model, *version),
                      [](const protocol::ModelMetadata& m) { return EncodeModelMetadata(m); }));
      return;
    case KServeEndpoint::kModelReady: {
      absl::StatusOr<bool> ready = server_->ModelReady(route.model, *version);
      responder.Send(ready.ok() ? ModelReadyAnswer(*ready, route.model, route.version)
                                : ErrorResponse(ready.status()));
      return;
    }
    case KServeEndpoint::kModelConfig:
      responder.Send(
          JsonOrError(server_->GetModelConfig(route.model, *version),
                      [](const config::ModelConfig& c) { return EncodeModelConfig(c); }));
      return;
    case KServeEndpoint::kModelStats:
      responder.Send(JsonOrError(
          server_->Statistics(route.model, *version),
          [](const std::vector<protocol::ModelStatistics>& s) { return EncodeStatistics(s); }));
      return;
    case KServeEndpoint::kRepositoryIndex: {
      absl::StatusOr<bool> ready_only = DecodeRepositoryIndexRequest(*request.body);
      if (!ready_only.ok()) {
        responder.Send(ErrorResponse(ready_only.status()));
        return;
      }
      responder.Send(JsonOrError(server_->RepositoryIndex(*ready_only),
                                 [](const std::vector<protocol::RepositoryIndexEntry>& entries) {
                                   return EncodeRepositoryIndex(entries);
                                 }));
      return;
    }
    case KServeEndpoint::kRepositoryLoad:
    case KServeEndpoint::kRepositoryUnload:
      HandleRepositoryChange(route.endpoint == KServeEndpoint::kRepositoryLoad, request,
                             std::move(responder), route.model);
      return;
    case KServeEndpoint::kLogging: {
      if (request.method != "POST") {
        responder.Send(HttpResponse::Json(200, EncodeLogSettings(server_->LogSettings())));
        return;
      }
      absl::StatusOr<protocol::LogSettingsUpdate> update = DecodeLogSettingsRequest(*request.body);
      if (!update.ok()) {
        responder.Send(ErrorResponse(update.status()));
        return;
      }
      responder.Send(
          JsonOrError(server_->UpdateLogSettings(*update),
                      [](const protocol::LogSettings& s) { return EncodeLogSettings(s); }));
      return;
    }
    case KServeEndpoint::kTraceSetting:
      responder.Send(TraceSettingAnswer(route, request, server_));
      return;
    case KServeEndpoint::kSharedMemoryStatus:
    case KServeEndpoint::kSharedMemoryRegister:
    case KServeEndpoint::kSharedMemoryUnregister:
      responder.Send(SharedMemoryAnswer(route, request, options_.shared_memory));
      return;
    case KServeEndpoint::kModelInfer:
      HandleInfer(request, std::move(responder), route.model, route.version);
      return;
    case KServeEndpoint::kMetrics: {
      HttpResponse response;
      response.headers.push_back({"Content-Type", std::string(telemetry::kPrometheusContentType)});
      response.body = server_->MetricsText();
      responder.Send(std::move(response));
      return;
    }
    case KServeEndpoint::kDashboard: {
      HttpResponse response;
      response.headers.push_back({"Content-Type", std::string(telemetry::kDashboardContentType)});
      response.body = std::string(telemetry::DashboardPage());
      responder.Send(std::move(response));
      return;
    }
    case KServeEndpoint::kCacheInvalidate:
      HandleCacheInvalidate(request, std::move(responder));
      return;
  }
}

size_t KServeHttpHandler::AlignedBodyOffset(const HttpRequest& head) {
  const std::optional<std::string_view> header_length = head.Header(kInferenceHeaderContentLength);
  size_t offset = 0;
  if (!header_length || !ParseInteger(*header_length, &offset)) return 0;
  return offset;
}

std::optional<protocol::TensorMetadata> KServeHttpHandler::OnlyInput(std::string_view model,
                                                                     std::string_view version) {
  absl::StatusOr<int64_t> number = protocol::ParseModelVersion(version);
  if (!number.ok()) return std::nullopt;
  absl::StatusOr<protocol::ModelMetadata> metadata = server_->GetModelMetadata(model, *number);
  if (!metadata.ok() || metadata->inputs.size() != 1) return std::nullopt;
  return std::move(metadata->inputs[0]);
}

void KServeHttpHandler::HandleInfer(const HttpRequest& request, HttpResponder responder,
                                    std::string_view model, std::string_view version) {
  std::optional<ContentCoding> coding = ContentCoding::kIdentity;
  if (std::optional<std::string_view> header = request.Header("Content-Encoding")) {
    coding = ParseContentEncoding(*header);
    if (!coding) {
      responder.Send(HttpResponse::Json(
          415, EncodeError(StrCat("Content-Encoding '", *header,
                                  "' is not supported; send gzip, deflate or identity"))));
      return;
    }
  }
  InferReport report;  // see InferReport for where it goes from here
  report.observer = server_->observer();
  report.request.model = std::string(model);
  report.request.version = std::string(version);
  report.parent =
      telemetry::ExtractTraceContext(request.Header("traceparent"), request.Header("tracestate"));
  report.request.clock.Mark(Stage::kArrival, request.arrival_ns);
  std::shared_ptr<BodyBuffer> body = request.body;
  if (*coding != ContentCoding::kIdentity) {
    // Inference-Header-Content-Length counts the uncompressed body: align that body's binary
    // section, as the transport aligned the compressed one. Inflating is part of decoding.
    absl::StatusOr<std::shared_ptr<BodyBuffer>> inflated =
        InflateBody(*coding, body->bytes(), options_.max_inflated_body_bytes,
                    AlignedBodyOffset(request), body->budget());
    if (!inflated.ok()) {
      report.request.clock.Mark(Stage::kDecoded, server_->clock()->NowNs());
      responder.Send(InferErrorResponse(
          absl::Status(inflated.status().code(),
                       StrCat("model '", model, "': ", inflated.status().message())),
          std::move(report)));
      return;
    }
    body = *std::move(inflated);
  }
  HttpInferInput input;
  input.model_name = model;
  input.model_version = version;
  input.header_length = request.Header(kInferenceHeaderContentLength);
  input.body = std::move(body);
  input.arrival_ns = request.arrival_ns;
  // A raw binary request (header length 0) has no JSON to name its input: the model's
  // metadata does, when the model has exactly one. An unknown model fails below as usual.
  std::optional<protocol::TensorMetadata> raw_input;
  if (input.header_length == "0") raw_input = OnlyInput(model, version);
  if (raw_input) input.raw_input = &*raw_input;
  input.shared_memory = options_.shared_memory;
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodeInferRequest(input);
  // Outputs the client placed in shared memory, held mapped until the answer is written there.
  absl::StatusOr<std::vector<protocol::SharedMemoryOutput>> shared_outputs;
  if (decoded.ok()) {
    shared_outputs =
        protocol::BindSharedMemoryOutputs(options_.shared_memory, &(*decoded)->outputs);
    if (!shared_outputs.ok()) decoded = shared_outputs.status();
  }
  const int64_t decoded_ns = server_->clock()->NowNs();
  report.request.clock.Mark(Stage::kDecoded, decoded_ns);
  if (!decoded.ok()) {
    responder.Send(InferErrorResponse(decoded.status(), std::move(report)));
    return;
  }
  std::unique_ptr<InferRequest> infer = *std::move(decoded);
  if (options_.header_forwarding != nullptr) {
    size_t forwarded = 0;
    for (size_t i = 0; i < request.headers.size(); ++i) {
      if (absl::Status status = options_.header_forwarding->Forward(
              request.headers.name(i), request.headers.value(i), &infer->parameters, &forwarded);
          !status.ok()) {
        responder.Send(InferErrorResponse(status, std::move(report)));
        return;
      }
    }
  }
  infer->protocol = Protocol::kHttp;
  infer->clock.Mark(Stage::kArrival, request.arrival_ns);
  infer->clock.Mark(Stage::kDecoded, decoded_ns);
  report.request.id = infer->id;
  auto cancel = std::make_shared<CancelFlag>();
  infer->cancel = cancel;
  responder.OnCancel([cancel] { cancel->Cancel(); });
  OutputEncoding encoding = OutputEncoding::FromRequest(*infer, *shared_outputs);
  encoding.set_non_finite_as_strings(options_.non_finite_as_strings);
  infer->on_complete = [responder = std::move(responder), encoding = std::move(encoding),
                        shared_outputs = *std::move(shared_outputs),
                        coding = NegotiateResponseCoding(request.Header("Accept-Encoding")),
                        arrival_ns = request.arrival_ns, on_sent = on_sent_,
                        report = std::move(report)](absl::StatusOr<InferResponse> result) mutable {
    if (result.ok() && !shared_outputs.empty()) {
      // One copy per output, into the client's region, on the thread that answered.
      const absl::Status written = protocol::WriteSharedMemoryOutputs(shared_outputs, *result);
      if (!written.ok()) result = written;
    }
    // Encoding happens on the io thread, not on the instance thread that answered.
    responder.SendFrom([result = std::move(result), encoding = std::move(encoding), coding,
                        arrival_ns, on_sent = std::move(on_sent),
                        report = std::move(report)]() mutable {
      return BuildInferResponse(std::move(result), encoding, coding, arrival_ns, on_sent,
                                std::move(report));
    });
  };
  server_->Infer(std::move(infer));
}

void KServeHttpHandler::HandleCacheInvalidate(const HttpRequest& request, HttpResponder responder) {
  absl::StatusOr<CacheInvalidateRequest> decoded = DecodeCacheInvalidateRequest(*request.body);
  if (!decoded.ok()) {
    responder.Send(ErrorResponse(decoded.status()));
    return;
  }
  // Waiting for Redis (bounded) must not hold an io thread: run on the cache worker.
  auto held = std::make_shared<HttpResponder>(std::move(responder));
  const bool queued = cache_worker_.Post([server = server_, scope = *std::move(decoded), held] {
    const absl::Status status =
        server->InvalidateCache(scope.model_name, scope.model_version, kInvalidateWait);
    held->Send(status.ok() ? CodeOnly(200) : ErrorResponse(status));
  });
  if (!queued) {
    held->Send(ErrorResponse(protocol::WithRetryAfter(
        absl::UnavailableError("too many admin requests in progress; retry shortly"), 1)));
  }
}

void KServeHttpHandler::HandleRepositoryChange(bool load, const HttpRequest& request,
                                               HttpResponder responder, const std::string& model) {
  protocol::LoadModelRequest load_request;
  if (load) {
    absl::StatusOr<protocol::LoadModelRequest> decoded =
        DecodeLoadModelRequest(model, *request.body);
    if (!decoded.ok()) {
      responder.Send(ErrorResponse(decoded.status()));
      return;
    }
    load_request = *std::move(decoded);
  } else if (absl::Status status = DecodeUnloadModelRequest(*request.body); !status.ok()) {
    responder.Send(ErrorResponse(status));
    return;
  }
  // Held outside the task so a refused task can still be answered.
  auto held = std::make_shared<HttpResponder>(std::move(responder));
  const bool queued = repository_worker_.Post(
      [server = server_, load, load_request = std::move(load_request), model, held] {
        const absl::Status status =
            load ? server->LoadModel(load_request) : server->UnloadModel(model);
        held->Send(status.ok() ? CodeOnly(200) : ErrorResponse(status));
      });
  if (!queued) {
    held->Send(ErrorResponse(protocol::WithRetryAfter(
        absl::UnavailableError("too many model repository requests in progress; retry shortly"),
        1)));
  }
}

}  // namespace brigade::frontend
