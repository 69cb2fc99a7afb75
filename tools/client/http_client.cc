#include "tools/client/http_client.h"

#include "core/json_text.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "google/protobuf/util/json_util.h"
#include "net/tls_client_context.h"
#include "protocol/http/infer_request_json.h"
#include "protocol/http/infer_response_json.h"
#include "protocol/http/metadata_json.h"
#include "protocol/http/repository_json.h"
#include "protocol/http/shared_memory_json.h"
#include "protocol/http/statistics_json.h"
#include "protocol/http/url_path.h"
#include "simdjson.h"
#include "tools/client/bearer_token.h"
#include "tools/client/client_status.h"

namespace brigade::client {

using net::HttpConnection;
using net::HttpResponse;
using net::ReceiveBuffer;

namespace {

// The bodies are the protocol's (protocol/http); this file is their transport.
using protocol::http::AppendModelPath;
using protocol::http::AppendPercentEncoded;
using protocol::http::DecodeInferResponse;
using protocol::http::DecodeModelMetadata;
using protocol::http::DecodeModelStatistics;
using protocol::http::DecodeRepositoryIndex;
using protocol::http::DecodeServerMetadata;
using protocol::http::EncodeInferRequest;
using protocol::http::EncodeLoadRequest;
using protocol::http::EncodeRepositoryIndexRequest;
using protocol::http::EncodeSharedMemoryRegisterRequest;
using protocol::http::ErrorMessageFromBody;

constexpr int kDefaultHttpPort = 8000;

iovec Iov(const void* data, size_t size) { return iovec{const_cast<void*>(data), size}; }

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(std::string_view address, int default_port) {
  std::string_view rest = address;
  const bool https = rest.starts_with("https://");
  if (https) rest.remove_prefix(8);
  if (rest.starts_with("http://")) rest.remove_prefix(7);
  if (rest.ends_with("/")) rest.remove_suffix(1);
  if (rest.empty() || rest.find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        StrCat("'", address, "' is not host:port (a server address takes no path)"));
  }
  HostPort result{.host = "", .port = default_port, .https = https};
  std::string_view port_text;
  if (rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat("'", address, "': unterminated '['"));
    }
    result.host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return absl::InvalidArgumentError(StrCat("'", address, "': expected ':' after ']'"));
      }
      port_text = rest.substr(1);
    }
  } else {
    const size_t colon = rest.rfind(':');
    if (colon != std::string_view::npos && rest.find(':') != colon) {
      return absl::InvalidArgumentError(
          StrCat("'", address, "': write IPv6 addresses in brackets, e.g. [::1]:8000"));
    }
    result.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port_text = rest.substr(colon + 1);
  }
  if (result.host.empty()) {
    return absl::InvalidArgumentError(StrCat("'", address, "' has no host"));
  }
  if (!port_text.empty() || rest.ends_with(":")) {
    if (!ParseInteger(port_text, &result.port) || result.port <= 0 || result.port > 65535) {
      return absl::InvalidArgumentError(StrCat("'", address, "' has a bad port"));
    }
  }
  return result;
}

absl::StatusOr<std::unique_ptr<HttpClient>> HttpClient::Create(const ClientOptions& options) {
  BRIGADE_ASSIGN_OR_RETURN(HostPort address, ParseHostPort(options.address, kDefaultHttpPort));
  if (options.timeout_ms < 0 || options.max_response_bytes <= 0) {
    return absl::InvalidArgumentError("timeout_ms must be >= 0 and max_response_bytes > 0");
  }
  std::shared_ptr<const net::TlsClientContext> tls;
  if (options.tls.enabled || address.https) {
    BRIGADE_ASSIGN_OR_RETURN(
        tls, net::TlsClientContext::Create({.root_cert_path = options.tls.root_cert_path,
                                            .client_cert_path = options.tls.client_cert_path,
                                            .client_key_path = options.tls.client_key_path}));
  }
  BRIGADE_ASSIGN_OR_RETURN(
      std::unique_ptr<HttpConnection> connection,
      HttpConnection::Create({.host = address.host,
                              .port = address.port,
                              .timeout_ms = options.timeout_ms,
                              .max_response_bytes = static_cast<size_t>(options.max_response_bytes),
                              .tls = std::move(tls)}));
  BRIGADE_RETURN_IF_ERROR(CheckBearerToken(options.bearer_token));
  auto client = std::make_unique<HttpClient>(Key(), std::move(connection));
  if (!options.bearer_token.empty()) {
    client->authorization_ = StrCat("\r\nAuthorization: Bearer ", options.bearer_token);
  }
  return client;
}

HttpClient::HttpClient(Key, std::unique_ptr<HttpConnection> connection)
    : connection_(std::move(connection)),
      parser_(std::make_unique<simdjson::dom::parser>()),
      receive_(std::make_shared<ReceiveBuffer>()) {}

HttpClient::~HttpClient() = default;

void HttpClient::BeginHead(std::string_view method) {
  request_head_.clear();
  request_head_.append(method);
  request_head_.push_back(' ');
}

void HttpClient::EndHead(std::string_view content_type, size_t content_length,
                         size_t inference_header) {
  request_head_.append(" HTTP/1.1\r\nHost: ");
  request_head_.append(connection_->authority());
  request_head_.append(authorization_);
  if (!content_type.empty()) {
    request_head_.append("\r\nContent-Type: ");
    request_head_.append(content_type);
    request_head_.append("\r\nContent-Length: ");
    AppendJsonUint(content_length, &request_head_);
  }
  if (inference_header != std::string::npos) {
    request_head_.append("\r\nInference-Header-Content-Length: ");
    AppendJsonUint(inference_header, &request_head_);
  }
  request_head_.append("\r\n\r\n");
}

absl::StatusOr<HttpResponse> HttpClient::Send(std::span<const iovec> body_parts) {
  iov_.clear();
  iov_.push_back(Iov(request_head_.data(), request_head_.size()));
  for (const iovec& part : body_parts) {
    if (part.iov_len > 0) iov_.push_back(part);
  }
  // Output views from the previous response still hold the buffer: receive into a new one.
  if (receive_.use_count() > 1) receive_ = std::make_shared<ReceiveBuffer>();
  return connection_->RoundTrip(iov_, receive_.get());
}

std::string_view HttpClient::BodyOf(const HttpResponse& response) const {
  return {receive_->data() + response.body_offset, response.body_bytes};
}

absl::Status HttpClient::ErrorFrom(const HttpResponse& response) {
  return HttpError(
      response.head.status,
      ErrorMessageFromBody(*parser_, BodyOf(response), StrCat("HTTP ", response.head.status)));
}

absl::StatusOr<std::string_view> HttpClient::Exchange(std::string_view body) {
  const iovec part = Iov(body.data(), body.size());
  BRIGADE_ASSIGN_OR_RETURN(HttpResponse response, Send(std::span<const iovec>(&part, 1)));
  if (response.head.status != 200) return ErrorFrom(response);
  return BodyOf(response);
}

absl::StatusOr<bool> HttpClient::Probe() {
  BRIGADE_ASSIGN_OR_RETURN(HttpResponse response, Send({}));
  if (response.head.status == 200) return true;
  if (response.head.status == 400 || response.head.status == 503) return false;
  return ErrorFrom(response);
}

absl::StatusOr<bool> HttpClient::ServerLive() {
  BeginHead("GET");
  request_head_.append("/v2/health/live");
  EndHead("", 0, std::string::npos);
  return Probe();
}

absl::StatusOr<bool> HttpClient::ServerReady() {
  BeginHead("GET");
  request_head_.append("/v2/health/ready");
  EndHead("", 0, std::string::npos);
  return Probe();
}

absl::StatusOr<bool> HttpClient::ModelReady(std::string_view model, std::string_view version) {
  BeginHead("GET");
  AppendModelPath(model, version, "/ready", &request_head_);
  EndHead("", 0, std::string::npos);
  return Probe();
}

absl::StatusOr<protocol::ServerMetadata> HttpClient::GetServerMetadata() {
  BeginHead("GET");
  request_head_.append("/v2");
  EndHead("", 0, std::string::npos);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view body, Exchange({}));
  return DecodeServerMetadata(*parser_, body);
}

absl::StatusOr<protocol::ModelMetadata> HttpClient::GetModelMetadata(std::string_view model,
                                                                     std::string_view version) {
  BeginHead("GET");
  AppendModelPath(model, version, "", &request_head_);
  EndHead("", 0, std::string::npos);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view body, Exchange({}));
  return DecodeModelMetadata(*parser_, body);
}

absl::StatusOr<config::ModelConfig> HttpClient::GetModelConfig(std::string_view model,
                                                               std::string_view version) {
  BeginHead("GET");
  AppendModelPath(model, version, "/config", &request_head_);
  EndHead("", 0, std::string::npos);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view body, Exchange({}));
  config::ModelConfig config;
  // Fields this client's schema lacks (a newer server, Triton's own) are not ours to refuse.
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(body.data(), body.size()), &config, options);
  if (!parsed.ok()) {
    return absl::InternalError(
        StrCat("the configuration of model '", model,
               "' is not a model configuration: ", std::string(parsed.message())));
  }
  return config;
}

absl::Status HttpClient::Infer(const InferSpec& request, InferResponse* response) {
  // Release views into the previous response first, so its buffer can be reused.
  response->outputs.clear();
  BRIGADE_RETURN_IF_ERROR(EncodeInferRequest(request, &json_, &binary_parts_));
  size_t content_length = json_.size();
  for (std::span<const std::byte> part : binary_parts_) content_length += part.size();

  BeginHead("POST");
  AppendModelPath(request.model_name, request.model_version, "/infer", &request_head_);
  if (request.binary_inputs) {
    EndHead("application/octet-stream", content_length, json_.size());
  } else {
    EndHead("application/json", content_length, std::string::npos);
  }
  // One iovec for the JSON and one per binary input; Send() prepends the head.
  body_iov_.clear();
  body_iov_.push_back(Iov(json_.data(), json_.size()));
  for (std::span<const std::byte> part : binary_parts_) {
    body_iov_.push_back(Iov(part.data(), part.size()));
  }
  BRIGADE_ASSIGN_OR_RETURN(HttpResponse http, Send(body_iov_));
  if (http.head.status != 200) return ErrorFrom(http);

  size_t json_bytes = http.body_bytes;
  if (http.head.inference_header_length.has_value()) {
    json_bytes = *http.head.inference_header_length;
    if (json_bytes > http.body_bytes) {
      return absl::InternalError(
          StrCat("malformed infer response: Inference-Header-Content-Length ", json_bytes,
                 " exceeds the body's ", http.body_bytes, " bytes"));
    }
  }
  char* body_start = receive_->data() + http.body_offset;
  const std::span<std::byte> binary(reinterpret_cast<std::byte*>(body_start + json_bytes),
                                    http.body_bytes - json_bytes);
  return DecodeInferResponse(*parser_, std::string_view(body_start, json_bytes), binary, receive_,
                             response);
}

absl::StatusOr<std::vector<protocol::ModelStatistics>> HttpClient::GetModelStatistics(
    std::string_view model, std::string_view version) {
  BeginHead("GET");
  if (model.empty()) {
    request_head_.append("/v2/models/stats");
  } else {
    AppendModelPath(model, version, "/stats", &request_head_);
  }
  EndHead("", 0, std::string::npos);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view body, Exchange({}));
  return DecodeModelStatistics(*parser_, body);
}

absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> HttpClient::RepositoryIndex(
    bool ready_only) {
  const std::string body = EncodeRepositoryIndexRequest(ready_only);
  BeginHead("POST");
  request_head_.append("/v2/repository/index");
  EndHead("application/json", body.size(), std::string::npos);
  BRIGADE_ASSIGN_OR_RETURN(std::string_view answer, Exchange(body));
  return DecodeRepositoryIndex(*parser_, answer);
}

absl::Status HttpClient::LoadModel(std::string_view model, std::string_view config_json) {
  const std::string body = EncodeLoadRequest(config_json);
  BeginHead("POST");
  request_head_.append("/v2/repository/models/");
  AppendPercentEncoded(model, &request_head_);
  request_head_.append("/load");
  EndHead("application/json", body.size(), std::string::npos);
  return Exchange(body).status();
}

absl::Status HttpClient::UnloadModel(std::string_view model) {
  constexpr std::string_view kBody = "{}";
  BeginHead("POST");
  request_head_.append("/v2/repository/models/");
  AppendPercentEncoded(model, &request_head_);
  request_head_.append("/unload");
  EndHead("application/json", kBody.size(), std::string::npos);
  return Exchange(kBody).status();
}

absl::Status HttpClient::RegisterSystemSharedMemory(const protocol::SharedMemoryRegion& region) {
  const std::string body = EncodeSharedMemoryRegisterRequest(region);
  BeginHead("POST");
  request_head_.append("/v2/systemsharedmemory/region/");
  AppendPercentEncoded(region.name, &request_head_);
  request_head_.append("/register");
  EndHead("application/json", body.size(), std::string::npos);
  return Exchange(body).status();
}

absl::Status HttpClient::UnregisterSystemSharedMemory(std::string_view name) {
  BeginHead("POST");
  request_head_.append("/v2/systemsharedmemory/region/");
  AppendPercentEncoded(name, &request_head_);
  request_head_.append("/unregister");
  EndHead("application/json", 0, std::string::npos);
  return Exchange({}).status();
}

}  // namespace brigade::client
