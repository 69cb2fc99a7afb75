// `brigade serve`: the inference server. Flag names follow tritonserver's where one exists.

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cache/redis_tier.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "frontend/auth/access_gate.h"
#include "frontend/auth/token_store.h"
#include "frontend/http/http_server.h"
#include "frontend/http/http_tls_context.h"
#include "frontend/http/kserve_http_handler.h"
#include "frontend/http/metrics_http_handler.h"
#include "frontend/shm/shared_memory_registry.h"
#include "protocol/header_forwarding.h"
#include "server/inference_server.h"
#include "spdlog/spdlog.h"
#include "telemetry/counter.h"
#include "telemetry/metrics_registry.h"
#include "tools/command.h"
#include "tools/serve_access.h"
#include "tools/serve_flags.h"
#include "tools/serve_grpc.h"
#include "tools/serve_memory.h"
#include "tools/serve_tls.h"

namespace brigade::tools {
namespace {

// "host:port" → (host, port); the host is an IP address or a name (hiredis resolves it when it
// connects, e.g. a Kubernetes Service name); "localhost" becomes 127.0.0.1.
absl::Status ParseRedisAddress(const std::string& address, InferenceServer::Options* options) {
  // Serving from memory alone would leave the operator believing the instances share answers
  // (and invalidations); the cache manager refuses it too, this names the flag.
  if (!cache::RedisTier::InBuild()) {
    return absl::FailedPreconditionError(
        "--cache-redis-address needs the Redis tier, and this binary was built without Redis "
        "(BRIGADE_WITH_REDIS=OFF, the edge preset): drop it (models can cache in memory, "
        "response_cache tier TIER_MEMORY)");
  }
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(
        StrCat("--cache-redis-address '", address, "' is not host:port"));
  }
  std::string host = address.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  int port = 0;
  if (!ParseInteger(std::string_view(address).substr(colon + 1), &port) || port <= 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        StrCat("--cache-redis-address '", address, "' has no valid port"));
  }
  options->cache_redis_host = std::move(host);
  options->cache_redis_port = port;
  return absl::OkStatus();
}

// Blocks the shutdown signals in this thread and every thread it creates afterwards, so that
// only the sigwait() below receives them.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  // SIGHUP re-reads the token file.
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// The front ends Stop() shuts down; null members are not running.
struct FrontEnds {
  InferenceServer* server = nullptr;
  GrpcFrontEnd* grpc = nullptr;
  frontend::HttpServer* http = nullptr;
  frontend::HttpServer* metrics = nullptr;
};

// The exit status when the exit deadline cut requests off (1 is a failed start).
constexpr int kExitRequestsCut = 2;

// After `signal_number`: one deadline, `--exit-timeout-secs` after the signal, bounds every
// phase together.
//   1. Drain delay: readiness turns false (HTTP /v2/health/ready, gRPC health) but everything is
//      still served, so load balancers notice before anything is refused. A second signal ends
//      it early.
//   2. Drain: the front ends stop accepting; each connection's requests already received, or
//      already in its socket, are answered, the last with `Connection: close`. Once they are
//      done the pipeline refuses new work and the work after answers (cache stores) finishes.
//   3. At the deadline whatever is unanswered is cut: HTTP answers it 503, gRPC cancels it. The
//      counts are logged and the exit status is kExitRequestsCut; the process exits without
//      waiting for model instances still computing.
// Returns the exit status.
int Stop(int signal_number, const sigset_t& signals, const ServeFlags& flags,
         const FrontEnds& ends) {
  const absl::Time signalled = absl::Now();
  const absl::Time deadline = signalled + absl::Seconds(flags.exit_timeout_secs);
  const absl::Duration delay =
      std::min(absl::Seconds(flags.drain_delay_secs), absl::Seconds(flags.exit_timeout_secs));
  spdlog::info(
      "received signal {}: not ready, serving for {} s more, then draining (exit within "
      "{} s)",
      signal_number, absl::ToDoubleSeconds(delay), flags.exit_timeout_secs);
  ends.server->MarkNotReady();
  if (ends.grpc != nullptr) ends.grpc->RefreshHealth();
  // SIGHUP (a token reload) is not a reason to cut the delay short; another SIGTERM/SIGINT is.
  for (absl::Duration left = delay; left > absl::ZeroDuration();
       left = signalled + delay - absl::Now()) {
    const timespec wait = absl::ToTimespec(left);
    const int second = sigtimedwait(&signals, nullptr, &wait);
    if (second == SIGINT || second == SIGTERM) {
      spdlog::info("second signal: ending the drain delay early");
      break;
    }
  }

  // All front ends at once: stopped one after the other, gRPC kept accepting calls while HTTP
  // drained. The pipeline keeps admitting until they are done: what they still take is what was
  // already in their sockets, sent before the client could know.
  const absl::Duration drain = std::max(deadline - absl::Now(), absl::ZeroDuration());
  size_t http_cut = 0;
  std::thread grpc_stop([&ends, drain] {
    if (ends.grpc != nullptr) ends.grpc->Shutdown(drain);
  });
  std::thread metrics_stop([&ends, drain] {
    if (ends.metrics != nullptr) ends.metrics->Shutdown(drain);
  });
  if (ends.http != nullptr) http_cut = ends.http->Shutdown(drain);
  metrics_stop.join();
  grpc_stop.join();
  // Nothing new can arrive now; what is left is work after answers (cache stores) and, past the
  // deadline, calls the front ends cut that a model instance is still computing.
  ends.server->StartDrain();
  const bool idle = ends.server->WaitIdle(std::max(deadline - absl::Now(), absl::ZeroDuration()));
  const int64_t in_flight = idle ? 0 : ends.server->InFlight();
  // Traces and access-log lines still queued are written, within what is left of the deadline.
  ends.server->observer()->Flush(
      std::clamp(deadline - absl::Now(), absl::Milliseconds(100), absl::Seconds(2)));
  const double took_secs = absl::ToDoubleSeconds(absl::Now() - signalled);
  if (in_flight > 0 || http_cut > 0) {
    spdlog::error(
        "exit deadline of {} s reached: requests were cut off: {} HTTP requests answered 503, "
        "{} requests (either protocol) still running; stopped after {:.2f} s",
        flags.exit_timeout_secs, http_cut, in_flight, took_secs);
    spdlog::default_logger()->flush();
    // Destroying the server would wait for the model instances still computing: past the
    // deadline nothing more is owed to anyone.
    std::_Exit(kExitRequestsCut);
  }
  spdlog::info("stopped after {:.2f} s, every request answered", took_secs);
  return 0;
}

int RunServe(const ServeFlags& flags) {
  spdlog::set_level(flags.log_verbose > 0 ? spdlog::level::debug
                                          : spdlog::level::from_str(flags.log_level));
  const sigset_t signals = BlockShutdownSignals();

  InferenceServer::Options options;
  options.model_repository = flags.model_repository;
  if (flags.model_control_mode == "poll") {
    options.control_mode = ModelControlMode::kPoll;
  } else if (flags.model_control_mode == "explicit") {
    options.control_mode = ModelControlMode::kExplicit;
  } else {
    options.control_mode = ModelControlMode::kNone;
  }
  options.startup_models = flags.load_models;
  options.repository_poll_interval = absl::Seconds(flags.repository_poll_secs);
  options.exit_on_error = flags.exit_on_error;
  options.pin_threads = flags.pin_threads;
  options.run_inline_max = absl::Microseconds(flags.run_inline_max_us);
  options.allow_symlinked_models = flags.allow_symlinked_models;
  options.preprocess_threads = flags.preprocess_threads;
  if (!flags.cache_redis_address.empty()) {
    if (absl::Status status = ParseRedisAddress(flags.cache_redis_address, &options);
        !status.ok()) {
      spdlog::error("cannot start: {}", status.message());
      return 1;
    }
  }
  options.cache_redis_timeout = absl::Microseconds(flags.cache_redis_timeout_us);
  options.observe.trace_rate = flags.trace_rate;
  options.observe.trace_errors = flags.trace_errors;
  options.observe.trace_slo = absl::Microseconds(flags.trace_slo_us);
  options.observe.otlp_endpoint = flags.trace_otlp_endpoint;
  options.observe.trace_file = flags.trace_file;
  options.observe.access_log_path = flags.access_log;
  options.observe.access_log_rate = flags.access_log_rate;
  // Declared before both front ends and the server: the requests they hold carry charges on it.
  absl::StatusOr<std::unique_ptr<MemoryBudget>> budget =
      InflightBudgetFromFlag(flags.max_inflight_bytes, doctor::HostFiles(""));
  if (!budget.ok()) {
    spdlog::error("cannot start: {}", budget.status().message());
    return 1;
  }
  absl::StatusOr<frontend::auth::PolicyOptions> policy = AccessPolicy(flags.access);
  if (!policy.ok()) {
    spdlog::error("cannot start: {}", policy.status().message());
    return 1;
  }
  std::unique_ptr<frontend::auth::TokenStore> tokens;
  if (!flags.access.auth_token_file.empty()) {
    absl::StatusOr<std::unique_ptr<frontend::auth::TokenStore>> store =
        frontend::auth::TokenStore::Create(flags.access.auth_token_file);
    if (!store.ok()) {
      spdlog::error("cannot start: --auth-token-file: {}", store.status().message());
      return 1;
    }
    tokens = *std::move(store);
    spdlog::info("auth: {} bearer token(s) from {}", tokens->Current()->size(),
                 flags.access.auth_token_file);
  }
  const bool http_open = flags.allow_http && !IsLoopback(flags.http_address) &&
                         !RestrictsRepository(policy->http_restrictions);
  const bool grpc_open = flags.allow_grpc && !IsLoopback(flags.grpc_address) &&
                         !RestrictsRepository(policy->grpc_restrictions);
  if (options.control_mode == ModelControlMode::kExplicit && tokens == nullptr &&
      (http_open || grpc_open)) {
    spdlog::warn(
        "explicit model control listens beyond loopback with no credential configured: anyone "
        "who reaches the port can load and unload models (set --auth-token-file)");
  }

  // Bad patterns stop the start, as bad certificates do.
  using Forwarding = std::unique_ptr<protocol::HeaderForwarding>;
  absl::StatusOr<Forwarding> http_forwarding = Forwarding();
  absl::StatusOr<Forwarding> grpc_forwarding = Forwarding();
  if (!flags.http_header_forward_pattern.empty()) {
    http_forwarding = protocol::HeaderForwarding::Create(flags.http_header_forward_pattern,
                                                         "--http-header-forward-pattern");
  }
  if (!flags.grpc_header_forward_pattern.empty()) {
    grpc_forwarding = protocol::HeaderForwarding::Create(flags.grpc_header_forward_pattern,
                                                         "--grpc-header-forward-pattern");
  }
  for (const auto* forwarding : {&http_forwarding, &grpc_forwarding}) {
    if (!forwarding->ok()) {
      spdlog::error("cannot start: {}", forwarding->status().message());
      return 1;
    }
  }

  // Certificates are checked before any model loads, so a bad file fails the start at once.
  using TlsStore = std::unique_ptr<frontend::tls::TlsCredentialStore>;
  absl::StatusOr<TlsStore> http_tls_store = TlsStore();
  if (flags.allow_http) http_tls_store = OpenTls(flags.http_tls);
  absl::StatusOr<TlsStore> grpc_tls_store = TlsStore();
  if (flags.allow_grpc && !GrpcFrontEnd::InBuild() && TlsFlagsSet(flags.grpc_tls)) {
    // The edge build serves HTTP only; dropping the flags would leave the operator believing a
    // TLS port is up.
    grpc_tls_store = absl::FailedPreconditionError(
        "--grpc-use-ssl and the other --grpc TLS flags need the gRPC front end, which this build "
        "lacks (BRIGADE_WITH_GRPC=OFF, the edge preset): drop them (--http-use-ssl serves HTTPS)");
  } else if (flags.allow_grpc) {
    grpc_tls_store = OpenTls(flags.grpc_tls);
  }
  for (const auto* store : {&http_tls_store, &grpc_tls_store}) {
    if (!store->ok()) {
      spdlog::error("cannot start: {}", store->status().message());
      return 1;
    }
  }
  // Null when gRPC is not served (--allow-grpc=false, or a build without it).
  std::unique_ptr<GrpcFrontEnd> grpc;
  if (flags.allow_grpc) {
    absl::StatusOr<std::unique_ptr<GrpcFrontEnd>> created = GrpcFrontEnd::Create(
        {.host = flags.grpc_address,
         .port = flags.grpc_port,
         .max_receive_message_bytes = flags.http_max_input_size,
         .max_concurrent_streams = flags.grpc_max_concurrent_streams,
         .max_metadata_bytes = flags.grpc_max_metadata_bytes,
         .infer_api = flags.grpc_infer_api,
         .infer_threads = flags.grpc_infer_threads,
         .tls = *grpc_tls_store != nullptr ? &(*grpc_tls_store)->current() : nullptr,
         // gRPC re-reads its private copy each second (the default refresh): a rotation
         // reaches it that soon after Brigade took it in, on SIGHUP or at --tls-reload-secs.
         .require_client_cert = flags.grpc_tls.mutual,
         .memory_budget = budget->get()});
    if (!created.ok()) {
      spdlog::error("cannot start gRPC: {}", created.status().message());
      return 1;
    }
    grpc = *std::move(created);
  }
  std::shared_ptr<frontend::HttpTlsContext> http_tls;
  if (*http_tls_store != nullptr) {
    absl::StatusOr<std::shared_ptr<frontend::HttpTlsContext>> created =
        frontend::HttpTlsContext::Create((*http_tls_store)->current(),
                                         {.require_client_cert = flags.http_tls.mutual});
    if (!created.ok()) {
      spdlog::error("cannot start HTTP: --http-server-cert: {}", created.status().message());
      return 1;
    }
    http_tls = *std::move(created);
  }

  absl::StatusOr<std::unique_ptr<InferenceServer>> server = InferenceServer::Create(options);
  if (!server.ok()) {
    spdlog::error("cannot start: {}", server.status().message());
    return 1;
  }
  std::unique_ptr<ServeMemoryMetrics> memory_metrics;
  if (*budget != nullptr) {
    absl::StatusOr<std::unique_ptr<ServeMemoryMetrics>> created =
        ServeMemoryMetrics::Create(budget->get(), (*server)->observer()->registry());
    if (!created.ok()) {
      spdlog::error("cannot start: {}", created.status().message());
      return 1;
    }
    memory_metrics = *std::move(created);
    spdlog::info("in-flight request memory: at most {} bytes (--max-inflight-bytes)",
                 (*budget)->limit());
  }
  absl::StatusOr<std::unique_ptr<frontend::auth::AccessGate>> gate =
      frontend::auth::AccessGate::Create({.policy = *std::move(policy),
                                          .tokens = tokens.get(),
                                          .registry = (*server)->observer()->registry()});
  if (!gate.ok()) {
    spdlog::error("cannot start: {}", gate.status().message());
    return 1;
  }

  // Registered shared-memory regions; outlives both front ends (declared before them).
  std::unique_ptr<frontend::SharedMemoryRegistry> shared_memory;
  if (flags.shared_memory == "system") {
    shared_memory =
        std::make_unique<frontend::SharedMemoryRegistry>(frontend::SharedMemoryRegistry::Options{});
  }

  // gRPC listens before HTTP does, so that HTTP readiness (what load balancers and tests poll)
  // implies every front end accepts connections.
  if (grpc != nullptr) {
    if (absl::Status started =
            grpc->Start(server->get(), gate->get(), grpc_forwarding->get(), shared_memory.get(),
                        memory_metrics != nullptr ? memory_metrics->refusals("grpc") : nullptr);
        !started.ok()) {
      spdlog::error("cannot start gRPC: {}", started.message());
      return 1;
    }
    spdlog::info("gRPC (KServe v2) listening on {}:{}{}", flags.grpc_address, grpc->port(),
                 grpc->serves_tls() ? " (TLS)" : "");
  }

  absl::StatusOr<telemetry::CounterFamily*> refused_family =
      (*server)->observer()->registry()->AddCounter(
          "brigade_http_connections_refused_total",
          "HTTP connections answered 503 and closed because --http-max-connections were open",
          {"port"});
  if (!refused_family.ok()) {
    spdlog::error("cannot start: {}", refused_family.status().message());
    return 1;
  }
  // A port's counter, labelled by what the port serves ("http" or "metrics").
  auto refused_counter = [&refused_family](std::string_view port) -> telemetry::Counter* {
    absl::StatusOr<telemetry::Counter*> counter = (*refused_family)->WithLabels({port});
    return counter.ok() ? *counter : nullptr;
  };
  telemetry::Counter* handshake_counter = nullptr;
  if (http_tls != nullptr) {
    absl::StatusOr<telemetry::CounterFamily*> family =
        (*server)->observer()->registry()->AddCounter(
            "brigade_tls_handshake_failures_total",
            "TLS handshakes that failed or timed out on the HTTP port (plain-text clients, "
            "missing or untrusted client certificates)",
            {"port"});
    if (family.ok()) {
      absl::StatusOr<telemetry::Counter*> counter = (*family)->WithLabels({"http"});
      if (counter.ok()) handshake_counter = *counter;
    }
  }
  frontend::HttpServer::Options transport;
  transport.address = flags.http_address;
  transport.max_connections = flags.http_max_connections;
  transport.max_header_bytes = static_cast<uint32_t>(flags.http_max_header_bytes);
  transport.max_header_count = static_cast<uint32_t>(flags.http_max_header_count);
  transport.max_request_line_bytes = static_cast<uint32_t>(flags.http_max_request_line_bytes);
  transport.max_pipelined_requests = flags.http_max_pipelined_requests;
  transport.header_timeout = absl::Seconds(flags.http_header_timeout_secs);
  transport.read_timeout = absl::Seconds(flags.http_read_timeout_secs);
  transport.idle_timeout = absl::Seconds(flags.http_idle_timeout_secs);
  transport.backlog = flags.listen_backlog;

  std::unique_ptr<frontend::KServeHttpHandler> http_handler;
  std::unique_ptr<frontend::HttpServer> http;
  if (flags.allow_http) {
    frontend::KServeHttpHandler::Options handler_options;
    handler_options.max_inflated_body_bytes = static_cast<size_t>(flags.http_max_input_size);
    handler_options.non_finite_as_strings = flags.http_json_non_finite == "string";
    handler_options.access_gate = gate->get();
    handler_options.header_forwarding = http_forwarding->get();
    handler_options.shared_memory = shared_memory.get();
    http_handler = std::make_unique<frontend::KServeHttpHandler>(server->get(), handler_options);
    frontend::HttpServer::Options http_options = transport;
    http_options.refused_connections = refused_counter("http");
    http_options.port = flags.http_port;
    http_options.io_threads = flags.http_thread_count;
    http_options.max_body_bytes = static_cast<size_t>(flags.http_max_input_size);
    // The metrics port (`transport` without this) stays plain, for a scraper on loopback.
    http_options.tls = http_tls;
    http_options.tls_handshake_failures = handshake_counter;
    http_options.memory_budget = budget->get();
    http_options.memory_budget_refusals =
        memory_metrics != nullptr ? memory_metrics->refusals("http") : nullptr;
    absl::StatusOr<std::unique_ptr<frontend::HttpServer>> created =
        frontend::HttpServer::Create(http_options, http_handler.get());
    if (!created.ok()) {
      spdlog::error("cannot start HTTP: {}", created.status().message());
      return 1;
    }
    http = *std::move(created);
    spdlog::info("HTTP (KServe v2 REST) listening on {}:{}{}", flags.http_address, http->port(),
                 http_tls != nullptr ? " (TLS)" : "");
  }

  std::unique_ptr<frontend::MetricsHttpHandler> metrics_handler;
  std::unique_ptr<frontend::HttpServer> metrics_http;
  if (flags.metrics_port >= 0) {
    metrics_handler = std::make_unique<frontend::MetricsHttpHandler>(server->get(), gate->get());
    frontend::HttpServer::Options metrics_options = transport;
    metrics_options.refused_connections = refused_counter("metrics");
    metrics_options.port = flags.metrics_port;
    metrics_options.io_threads = 1;
    absl::StatusOr<std::unique_ptr<frontend::HttpServer>> created =
        frontend::HttpServer::Create(metrics_options, metrics_handler.get());
    if (!created.ok()) {
      spdlog::error("cannot start the metrics port: {}", created.status().message());
      return 1;
    }
    metrics_http = *std::move(created);
    spdlog::info("metrics (Prometheus) listening on {}:{}", flags.http_address,
                 metrics_http->port());
  }

  // A rotation of the certificate files: checked, then taken into use by new connections.
  const TlsReload http_reload{
      http_tls != nullptr ? http_tls_store->get() : nullptr,
      [&http_tls](const frontend::tls::TlsCredentials& next) { return http_tls->Update(next); }};
  const TlsReload grpc_reload{
      grpc != nullptr && grpc->serves_tls() ? grpc_tls_store->get() : nullptr,
      [&grpc](const frontend::tls::TlsCredentials& next) { return grpc->UpdateTls(next); }};
  absl::Time tls_checked = absl::Now();

  // Waits for a shutdown signal; meanwhile SIGHUP re-reads the token file, and so does a change
  // of the file itself (looked at once a second). A bad file keeps the tokens in force. SIGHUP
  // re-reads the certificate files too, and with --tls-reload-secs a change of them (looked at
  // that often) does the same.
  int signal_number = 0;
  for (;;) {
    const struct timespec second = {1, 0};
    signal_number = sigtimedwait(&signals, nullptr, &second);
    if (signal_number == SIGINT || signal_number == SIGTERM) break;
    if (signal_number == SIGHUP ||
        (flags.tls_reload_secs > 0 &&
         absl::Now() - tls_checked >= absl::Seconds(flags.tls_reload_secs))) {
      tls_checked = absl::Now();
      ReloadTls(http_reload, signal_number == SIGHUP);
      ReloadTls(grpc_reload, signal_number == SIGHUP);
    }
    if (memory_metrics != nullptr) memory_metrics->Sample();
    if (tokens == nullptr) continue;
    if (signal_number == SIGHUP) {
      const absl::Status reloaded = tokens->Reload();
      if (reloaded.ok()) {
        spdlog::info("auth: SIGHUP: {} token(s) from {}", tokens->Current()->size(),
                     tokens->path());
      } else {
        spdlog::error("auth: SIGHUP: keeping the tokens in force: {}", reloaded.message());
      }
    } else if (absl::StatusOr<bool> changed = tokens->ReloadIfChanged(); !changed.ok()) {
      spdlog::error("auth: the token file changed; keeping the tokens in force: {}",
                    changed.status().message());
    } else if (*changed) {
      spdlog::info("auth: the token file changed: {} token(s)", tokens->Current()->size());
    }
  }
  return Stop(signal_number, signals, flags,
              FrontEnds{server->get(), grpc.get(), http.get(), metrics_http.get()});
}

}  // namespace

void RegisterServeCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* serve = app.add_subcommand("serve", "Serve the models of a model repository");
  AddServeFlags(serve, flags.get());
  serve->callback([flags, exit_code] { *exit_code = RunServe(*flags); });
}

const CommandRegistration kServeRegistration(10, RegisterServeCommand);

}  // namespace brigade::tools
