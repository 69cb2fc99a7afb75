#include "tools/serve_flags.h"

#include "cache/redis_tier.h"
#include "tools/serve_memory.h"

namespace brigade::tools {

void AddServeFlags(CLI::App* serve, ServeFlags* flags) {
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
}

}  // namespace brigade::tools
