// `brigade serve`: the inference server. Flag names follow tritonserver's where one exists.

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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
#include "scheduler/cpu_affinity.h"
#include "server/inference_server.h"
#include "spdlog/spdlog.h"
#include "telemetry/counter.h"
#include "telemetry/metrics_registry.h"
#include "tools/command.h"
#include "tools/serve_access.h"
#include "tools/serve_grpc.h"
#include "tools/serve_memory.h"
#include "tools/serve_tls.h"

namespace brigade::tools {
namespace {

struct ServeFlags {
  std::string model_repository = "models";
  std::string model_control_mode = "none";
  std::vector<std::string> load_models;
  int repository_poll_secs = 15;
  bool exit_on_error = true;
  bool allow_http = true;
  bool allow_grpc = true;
  // Every interface, as Triton: a deployment behind a Service or load balancer needs it. The
  // README's Security section says to pass 127.0.0.1 where only local clients should reach it.
  std::string http_address = "0.0.0.0";
  int http_port = 8000;
  // Two, or fewer when the process may run on fewer CPUs (taskset, a cgroup cpuset): io threads
  // beyond the CPUs time-share one core, and a request that runs to completion on one of them
  // waits out the scheduler's slice of the other (p99 4.5 ms against 0.8 ms measured with two io
  // threads on one pinned core, bench/results/serving_overhead.md).
  int http_thread_count = std::min(2, static_cast<int>(scheduler::AvailableCpus().size()));
  int64_t http_max_input_size = int64_t{64} << 20;
  std::string http_json_non_finite = "literal";
  // The HTTP transport's limits; defaults are HttpServer::Options'.
  int http_max_connections = frontend::HttpServer::Options().max_connections;
  int http_max_header_bytes = static_cast<int>(frontend::HttpServer::Options().max_header_bytes);
  int http_max_header_count = static_cast<int>(frontend::HttpServer::Options().max_header_count);
  int http_max_request_line_bytes =
      static_cast<int>(frontend::HttpServer::Options().max_request_line_bytes);
  int http_max_pipelined_requests = frontend::HttpServer::Options().max_pipelined_requests;
  double http_header_timeout_secs =
      absl::ToDoubleSeconds(frontend::HttpServer::Options().header_timeout);
  double http_read_timeout_secs =
      absl::ToDoubleSeconds(frontend::HttpServer::Options().read_timeout);
  double http_idle_timeout_secs =
      absl::ToDoubleSeconds(frontend::HttpServer::Options().idle_timeout);
  int listen_backlog = frontend::HttpServer::Options().backlog;
  std::string grpc_address = "0.0.0.0";
  int grpc_port = 8001;
  int grpc_max_concurrent_streams = GrpcFrontEnd::Options().max_concurrent_streams;
  int grpc_max_metadata_bytes = GrpcFrontEnd::Options().max_metadata_bytes;
  std::string grpc_infer_api = GrpcFrontEnd::Options().infer_api;
  // One poller per CPU the process may use (the completion-queue and sync APIs only).
  int grpc_infer_threads = static_cast<int>(scheduler::AvailableCpus().size());
  // A metrics-only HTTP port besides GET /metrics on the HTTP port; -1 = none.
  int metrics_port = -1;
  // On SIGTERM: unready but serving for drain_delay_secs, then draining; everything within
  // exit_timeout_secs of the signal.
  double drain_delay_secs = 5;
  double exit_timeout_secs = 30;
  bool pin_threads = true;
  int64_t run_inline_max_us = 1000;
  bool allow_symlinked_models = false;
  // Triton's system shared memory extension: "system" serves it, "none" turns it off.
  std::string shared_memory = "system";
  int preprocess_threads = 1;
  std::string log_level = "info";
  int log_verbose = 0;
  // Response cache's shared tier ("host:port"; empty = in-process tier only).
  std::string cache_redis_address;
  int64_t cache_redis_timeout_us = 2'000;
  // Tracing and access log.
  double trace_rate = 0.0;
  bool trace_errors = true;
  int64_t trace_slo_us = 0;
  std::string trace_otlp_endpoint;
  std::string trace_file;
  std::string access_log;
  double access_log_rate = 1.0;
  // Access control (README "Security").
  AccessFlags access;
  std::string max_inflight_bytes = "auto";
  // Triton's header forwarding: empty, none.
  std::string http_header_forward_pattern;
  std::string grpc_header_forward_pattern;
  // TLS (README "TLS"); gRPC's flags are Triton's, HTTP's follow them.
  TlsFlags http_tls{.prefix = "--http"};
  TlsFlags grpc_tls{.prefix = "--grpc"};
  // How often the certificate files are looked at for a rotation; 0 = never (fixed at start).
  int tls_reload_secs = 0;
};

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
  serve
      ->add_option("--model-repository", flags->model_repository,
                   "Model repository directory (Triton layout)")
      ->capture_default_str();
  serve
      ->add_option("--model-control-mode", flags->model_control_mode,
                   "none: load all at start; poll: also rescan; explicit: load/unload API")
      ->check(CLI::IsMember({"none", "poll", "explicit"}))
      ->capture_default_str();
  serve->add_option("--load-model", flags->load_models,
                    "Model to load at start in explicit mode (repeatable; '*' = all)");
  serve
      ->add_option("--repository-poll-secs", flags->repository_poll_secs,
                   "Seconds between repository scans in poll mode")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve
      ->add_option("--exit-on-error", flags->exit_on_error,
                   "Exit if a model fails to load at start-up")
      ->capture_default_str();
  serve->add_option("--allow-http", flags->allow_http, "Serve HTTP/REST")->capture_default_str();
  serve->add_option("--allow-grpc", flags->allow_grpc, "Serve gRPC")->capture_default_str();
  serve
      ->add_option("--http-address", flags->http_address,
                   "HTTP listen address (also the metrics port's); the default is every "
                   "interface: pass 127.0.0.1 to serve local clients only")
      ->capture_default_str();
  serve->add_option("--http-port", flags->http_port, "HTTP port (0 = any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  serve
      ->add_option("--http-thread-count", flags->http_thread_count,
                   "HTTP I/O threads (default: 2, at most the CPUs this process may use)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  serve
      ->add_option("--http-max-input-size", flags->http_max_input_size,
                   "Largest request body in bytes (HTTP and gRPC); larger requests get 413 / "
                   "RESOURCE_EXHAUSTED")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31))
      ->capture_default_str();
  serve
      ->add_option(
          "--http-json-non-finite", flags->http_json_non_finite,
          "NaN and infinities in JSON outputs: 'literal' (NaN, Infinity: Triton's, read by "
          "Python's json) or 'string' (\"NaN\", \"Infinity\": strict JSON)")
      ->check(CLI::IsMember({"literal", "string"}))
      ->capture_default_str();
  serve
      ->add_option("--http-max-connections", flags->http_max_connections,
                   "Open HTTP connections at once (per port); one more is answered 503 and "
                   "closed, counted in brigade_http_connections_refused_total (0 = no limit)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  serve
      ->add_option("--http-max-header-bytes", flags->http_max_header_bytes,
                   "Largest HTTP request head (request line and headers; also a chunked body's "
                   "chunk-size line or trailer); larger gets 431")
      ->check(CLI::Range(256, 1 << 20))
      ->capture_default_str();
  serve
      ->add_option("--http-max-header-count", flags->http_max_header_count,
                   "Most header fields in one HTTP request; more gets 431")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  serve
      ->add_option("--http-max-request-line-bytes", flags->http_max_request_line_bytes,
                   "Longest HTTP request line; longer gets 414")
      ->check(CLI::Range(16, 1 << 20))
      ->capture_default_str();
  serve
      ->add_option("--http-max-pipelined-requests", flags->http_max_pipelined_requests,
                   "Unanswered requests per HTTP connection before the server stops reading it")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  serve
      ->add_option("--http-header-timeout-secs", flags->http_header_timeout_secs,
                   "An HTTP request's head must arrive within this long of its first byte, else "
                   "408 (slowloris)")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  serve
      ->add_option("--http-read-timeout-secs", flags->http_read_timeout_secs,
                   "A whole HTTP request must arrive within this long of its first byte, else 408")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  serve
      ->add_option("--http-idle-timeout-secs", flags->http_idle_timeout_secs,
                   "An HTTP keep-alive connection with nothing in progress is closed after this")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  serve
      ->add_option("--listen-backlog", flags->listen_backlog,
                   "listen() backlog of the HTTP and metrics ports (default SOMAXCONN; the kernel "
                   "caps it at net.core.somaxconn; gRPC sizes its own from that sysctl)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  serve
      ->add_option("--grpc-address", flags->grpc_address,
                   "gRPC listen address; the default is every interface: pass 127.0.0.1 to "
                   "serve local clients only")
      ->capture_default_str();
  serve->add_option("--grpc-port", flags->grpc_port, "gRPC port (0 = any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  serve
      ->add_option("--grpc-max-concurrent-streams", flags->grpc_max_concurrent_streams,
                   "Concurrent gRPC calls per connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  serve
      ->add_option("--grpc-max-metadata-bytes", flags->grpc_max_metadata_bytes,
                   "Largest gRPC request metadata (headers); larger is refused")
      ->check(CLI::Range(1024, 1 << 24))
      ->capture_default_str();
  serve
      ->add_option("--grpc-infer-api", flags->grpc_infer_api,
                   "gRPC API that serves ModelInfer: callback (gRPC's threads), completion-queue "
                   "(Brigade's pollers) or sync (gRPC's synchronous pool)")
      ->check(CLI::IsMember({"callback", "completion-queue", "sync"}))
      ->capture_default_str();
  serve
      ->add_option("--grpc-infer-threads", flags->grpc_infer_threads,
                   "Threads of the completion-queue and sync gRPC APIs (default: the CPUs this "
                   "process may use)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  serve
      ->add_option("--metrics-port", flags->metrics_port,
                   "Also serve GET /metrics alone on this port (Triton uses 8002; -1 = off; "
                   "/metrics is always on the HTTP port)")
      ->check(CLI::Range(-1, 65535))
      ->capture_default_str();
  serve
      ->add_option("--drain-delay-secs", flags->drain_delay_secs,
                   "On SIGTERM/SIGINT, how long the server reports not ready while still serving "
                   "everything (so load balancers stop sending) before it drains; a second signal "
                   "ends it; counts within --exit-timeout-secs")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  serve
      ->add_option("--exit-timeout-secs", flags->exit_timeout_secs,
                   "On SIGTERM/SIGINT, the deadline for the whole shutdown (drain delay, drain, "
                   "flush); requests cut off by it get 503 / CANCELLED, are counted in the log "
                   "and make the exit status 2")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  serve->add_option("--pin-threads", flags->pin_threads, "Pin model instance threads to cores")
      ->capture_default_str();
  serve
      ->add_option("--run-inline-max-us", flags->run_inline_max_us,
                   "Run to completion: a request for an idle model whose batch is predicted (p99) "
                   "to take at most this many microseconds runs on the thread that received it, "
                   "with no hand-off to an instance thread; 0 always hands off")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000}))
      ->capture_default_str();
  serve
      ->add_option("--shared-memory", flags->shared_memory,
                   "Triton's system shared memory extension: system (serve it) or none (refuse "
                   "its endpoints, RPCs and tensors); CUDA shared memory is never served")
      ->check(CLI::IsMember({"system", "none"}));
  serve->add_flag("--allow-symlinked-models", flags->allow_symlinked_models,
                  "Serve model directories that are symbolic links to places outside the model "
                  "repository (refused by default: the load fails saying so)");
  serve
      ->add_option("--preprocess-threads", flags->preprocess_threads,
                   "Threads of the pool that runs models' attached preprocess steps (count "
                   "them with the instances' threads against the cores)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  serve->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  serve->add_option("--log-verbose", flags->log_verbose, "Triton-style verbosity (>0 = debug)");
  serve->add_option("--cache-redis-address", flags->cache_redis_address,
                    cache::RedisTier::InBuild()
                        ? "Shared response-cache tier, host:port of a Redis server (models opt in "
                          "with response_cache in config.pbtxt)"
                        : "Not in this build (built without Redis): refused");
  serve
      ->add_option("--cache-redis-timeout-us", flags->cache_redis_timeout_us,
                   "Redis command timeout; a slower answer counts as a miss")
      ->check(CLI::Range(int64_t{100}, int64_t{10'000'000}))
      ->capture_default_str();
  serve
      ->add_option("--trace-rate", flags->trace_rate,
                   "Fraction of requests traced (needs --trace-otlp-endpoint or --trace-file)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  serve->add_option("--trace-errors", flags->trace_errors, "Also trace every failed request")
      ->capture_default_str();
  serve
      ->add_option("--trace-slo-us", flags->trace_slo_us,
                   "Also trace every request slower than this end to end (0 = off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  serve->add_option("--trace-otlp-endpoint", flags->trace_otlp_endpoint,
                    "OTLP/HTTP JSON collector URL, e.g. http://127.0.0.1:4318/v1/traces");
  serve->add_option("--trace-file", flags->trace_file, "Write sampled traces as JSON lines");
  serve->add_option("--access-log", flags->access_log, "Write a JSON-lines access log here");
  serve
      ->add_option("--access-log-rate", flags->access_log_rate,
                   "Fraction of requests written to the access log")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  AddAccessFlags(serve, &flags->access);
  AddMemoryFlags(serve, &flags->max_inflight_bytes);
  serve->add_option("--http-header-forward-pattern", flags->http_header_forward_pattern,
                    "Triton's: HTTP headers of an inference request whose names this RE2 pattern "
                    "matches become request parameters (routing rules read them); never "
                    "Authorization");
  serve->add_option("--grpc-header-forward-pattern", flags->grpc_header_forward_pattern,
                    "Triton's: the same for gRPC metadata (keys are lower case; -bin entries are "
                    "never forwarded)");
  AddTlsFlags(serve, &flags->http_tls, "HTTP");
  AddTlsFlags(serve, &flags->grpc_tls, "gRPC");
  serve
      ->add_option("--tls-reload-secs", flags->tls_reload_secs,
                   "Look at the TLS certificate files this often and take a rotation into use "
                   "for new connections; SIGHUP re-reads them whatever this is; a bad file keeps "
                   "the certificate in force; 0 = only on SIGHUP")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();
  serve->callback([flags, exit_code] { *exit_code = RunServe(*flags); });
}

const CommandRegistration kServeRegistration(10, RegisterServeCommand);

}  // namespace brigade::tools
