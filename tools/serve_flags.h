#ifndef BRIGADE_TOOLS_SERVE_FLAGS_H_
#define BRIGADE_TOOLS_SERVE_FLAGS_H_

// The flags of `brigade serve` (names follow tritonserver's where one exists): their values with
// the defaults the server starts with, and their registration on the CLI11 subcommand, which
// parses and range-checks them. What the values mean to the server is serve_command.cc's;
// the access, memory and TLS flags are registered through serve_access.h, serve_memory.h and
// serve_tls.h.
//
// Thread safety: none; `brigade serve`'s main thread registers, parses and reads them.
// Ownership: AddServeFlags borrows `flags`, which CLI11 writes while it parses: it must outlive
// `serve`.
// Failure: a value out of range or not among a flag's choices is CLI11's parse error, which
// names the flag; AddServeFlags itself does not fail.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "CLI/App.hpp"
#include "absl/time/time.h"
#include "frontend/http/http_server.h"
#include "scheduler/cpu_affinity.h"
#include "tools/serve_access.h"
#include "tools/serve_grpc.h"
#include "tools/serve_tls.h"

namespace brigade::tools {

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

// Registers every flag of `brigade serve` on `serve` for `flags` (borrowed; outlives `serve`).
void AddServeFlags(CLI::App* serve, ServeFlags* flags);

}  // namespace brigade::tools

#endif  // BRIGADE_TOOLS_SERVE_FLAGS_H_
