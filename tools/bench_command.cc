// `brigade bench`: the load generator (perf_analyzer's job) for any KServe v2 server. Parses
// flags into loadgen::BenchOptions, runs loadgen::RunBench and prints the report; everything
// else lives in tools/loadgen.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tools/client/bearer_token.h"
#include "tools/command.h"
#include "tools/loadgen/bench_report.h"
#include "tools/loadgen/bench_runner.h"
#include "tools/loadgen/progress_line.h"

namespace brigade::tools {
namespace {

struct BenchFlags {
  std::string model;
  std::string model_version;
  std::string url;
  std::string protocol = "http";
  bool http_binary = false;
  std::string shared_memory = "none";
  std::vector<int> concurrency = {1};
  std::vector<double> rates;
  std::string arrival = "constant";
  int open_loop_workers = 32;
  double warmup_s = 1.0;
  int64_t warmup_requests = 0;
  double duration_s = 5.0;
  int64_t requests = 0;
  int64_t batch_size = 1;
  std::vector<std::string> shapes;
  std::vector<std::string> inputs;
  std::string input_dir;
  int random_samples = 1;
  std::string sample_order = "cycle";
  double zipf_s = 1.0;
  std::vector<std::string> request_parameters;
  int64_t string_length = 16;
  std::vector<std::string> outputs;
  int64_t timeout_ms = 60'000;
  // The bearer token's file; empty: BRIGADE_TOKEN, if set.
  std::string auth_token_file;
  // TLS (perf_analyzer's --ssl-grpc-* / --ssl-https-* reduced to one set for either protocol).
  bool ssl = false;
  std::string root_cert;
  std::string client_cert;
  std::string client_key;
  bool no_server_stats = false;
  std::string format = "table";
  std::string output;
  bool progress = false;
  bool no_progress = false;
  uint64_t seed = 1;
};

// "NAME:1,28,28" → name and dims.
absl::Status ParseShapeFlag(std::string_view text, loadgen::InputOptions* inputs) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(StrCat("--shape '", text, "' is not NAME:d1,d2,..."));
  }
  Shape dims;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    int64_t dim = 0;
    if (!ParseInteger(rest.substr(0, comma), &dim) || dim < 0) {
      return absl::InvalidArgumentError(StrCat("--shape '", text, "' has a bad dimension"));
    }
    dims.push_back(dim);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  inputs->shapes[std::string(text.substr(0, colon))] = dims;
  return absl::OkStatus();
}

// perf_analyzer's form "NAME:VALUE:TYPE", TYPE one of string, int, bool (default string).
absl::Status ParseRequestParameter(std::string_view text, Parameters* parameters) {
  const size_t first = text.find(':');
  if (first == std::string_view::npos || first == 0) {
    return absl::InvalidArgumentError(
        StrCat("--request-parameter '", text, "' is not NAME:VALUE[:TYPE]"));
  }
  std::string_view value = text.substr(first + 1);
  std::string_view type = "string";
  if (const size_t last = value.rfind(':'); last != std::string_view::npos) {
    type = value.substr(last + 1);
    value = value.substr(0, last);
  }
  std::string name(text.substr(0, first));
  if (type == "string") {
    parameters->Set(std::move(name), std::string(value));
  } else if (type == "int") {
    int64_t number = 0;
    if (!ParseInteger(value, &number)) {
      return absl::InvalidArgumentError(
          StrCat("--request-parameter '", text, "': '", value, "' is not an integer"));
    }
    parameters->Set(std::move(name), number);
  } else if (type == "bool" && (value == "true" || value == "false")) {
    parameters->Set(std::move(name), value == "true");
  } else {
    return absl::InvalidArgumentError(
        StrCat("--request-parameter '", text, "': TYPE must be string, int or bool (true|false)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<loadgen::BenchOptions> ToOptions(const BenchFlags& flags) {
  loadgen::BenchOptions options;
  options.client.protocol =
      flags.protocol == "grpc" ? client::ClientProtocol::kGrpc : client::ClientProtocol::kHttp;
  options.client.address = !flags.url.empty() ? flags.url
                           : options.client.protocol == client::ClientProtocol::kGrpc
                               ? "localhost:8001"
                               : "localhost:8000";
  options.client.timeout_ms = flags.timeout_ms;
  absl::StatusOr<std::string> token = client::ResolveBearerToken(
      flags.auth_token_file, std::getenv(client::kTokenEnvironmentVariable));
  if (!token.ok()) return token.status();
  options.client.bearer_token = *std::move(token);
  options.client.tls = {
      .enabled = flags.ssl || !flags.root_cert.empty() || !flags.client_cert.empty(),
      .root_cert_path = flags.root_cert,
      .client_cert_path = flags.client_cert,
      .client_key_path = flags.client_key};
  options.model_name = flags.model;
  options.model_version = flags.model_version;
  options.http_binary = flags.http_binary;
  if (flags.http_binary && options.client.protocol == client::ClientProtocol::kGrpc) {
    return absl::InvalidArgumentError("--http-binary applies to --protocol http only");
  }
  options.shared_memory = flags.shared_memory == "system" ? loadgen::SharedMemory::kSystem
                                                          : loadgen::SharedMemory::kNone;
  options.outputs = flags.outputs;
  options.concurrency = flags.concurrency;
  if (!flags.rates.empty()) {
    options.mode =
        flags.arrival == "poisson" ? loadgen::LoadMode::kPoisson : loadgen::LoadMode::kConstantRate;
    options.rates = flags.rates;
  }
  options.open_loop_workers = flags.open_loop_workers;
  options.warmup_ms = static_cast<int64_t>(flags.warmup_s * 1000);
  options.warmup_requests = flags.warmup_requests;
  options.duration_ms = static_cast<int64_t>(flags.duration_s * 1000);
  options.requests = flags.requests;
  options.server_stats = !flags.no_server_stats;
  options.seed = flags.seed;
  options.sample_order =
      flags.sample_order == "zipf" ? loadgen::SampleOrder::kZipf : loadgen::SampleOrder::kCycle;
  options.zipf_exponent = flags.zipf_s;
  for (const std::string& parameter : flags.request_parameters) {
    if (absl::Status status = ParseRequestParameter(parameter, &options.request_parameters);
        !status.ok()) {
      return status;
    }
  }

  loadgen::InputOptions& inputs = options.inputs;
  inputs.batch_size = flags.batch_size;
  inputs.directory = flags.input_dir;
  inputs.random_samples = flags.random_samples;
  inputs.string_length = flags.string_length;
  inputs.seed = flags.seed;
  for (const std::string& shape : flags.shapes) {
    if (absl::Status status = ParseShapeFlag(shape, &inputs); !status.ok()) return status;
  }
  for (const std::string& input : flags.inputs) {
    const size_t equals = input.find('=');
    if (equals == std::string::npos || equals == 0) {
      return absl::InvalidArgumentError(StrCat("--input '", input, "' is not NAME=PATH"));
    }
    inputs.files[input.substr(0, equals)] = input.substr(equals + 1);
  }
  return options;
}

int RunBenchCommand(const BenchFlags& flags) {
  absl::StatusOr<loadgen::BenchOptions> options = ToOptions(flags);
  if (!options.ok()) {
    fmt::print(stderr, "brigade bench: {}\n", options.status().message());
    return 2;
  }
  const bool show_progress = !flags.no_progress && (flags.progress || isatty(STDERR_FILENO));
  std::unique_ptr<loadgen::ProgressLine> progress;
  if (show_progress) progress = std::make_unique<loadgen::ProgressLine>(stderr);
  absl::StatusOr<loadgen::BenchReport> report = loadgen::RunBench(*options, progress.get());
  if (!report.ok()) {
    fmt::print(stderr, "brigade bench: {}\n", report.status().message());
    return 1;
  }
  std::string text;
  if (flags.format == "json") {
    text = loadgen::FormatJson(*report);
  } else if (flags.format == "csv") {
    text = loadgen::FormatCsv(*report);
  } else {
    text = loadgen::FormatTable(*report);
  }
  if (flags.output.empty() || flags.output == "-") {
    fmt::print(stdout, "{}", text);
    return 0;
  }
  std::ofstream file(flags.output, std::ios::binary);
  file << text;
  if (!file) {
    fmt::print(stderr, "brigade bench: cannot write '{}'\n", flags.output);
    return 1;
  }
  return 0;
}

}  // namespace

void RegisterBenchCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* bench = app.add_subcommand(
      "bench", "Measure latency and throughput of a model on any KServe v2 server");
  bench->add_option("-m,--model,model", flags->model, "Model to benchmark")->required();
  bench->add_option("-x,--model-version", flags->model_version,
                    "Model version (default: the server's choice)");
  bench->add_option("-u,--url", flags->url,
                    "Server address host:port (default localhost:8000, gRPC localhost:8001)");
  bench->add_option("-i,--protocol", flags->protocol, "http or grpc")
      ->check(CLI::IsMember({"http", "grpc"}))
      ->capture_default_str();
  bench->add_flag("--http-binary", flags->http_binary,
                  "HTTP: send inputs and receive outputs with the binary tensor extension");
  bench
      ->add_option("--shared-memory", flags->shared_memory,
                   "system: each connection writes its inputs once into a POSIX shared memory "
                   "region it registers with the server, and requests refer to it (server on "
                   "this host); none: inputs travel in the requests")
      ->check(CLI::IsMember({"none", "system"}))
      ->capture_default_str();
  bench
      ->add_option("--concurrency", flags->concurrency,
                   "Closed loop: concurrent requests, one level per value (e.g. 1,4,16)")
      ->delimiter(',')
      ->capture_default_str();
  bench
      ->add_option("--rate", flags->rates,
                   "Open loop: requests per second, one level per value (e.g. 100,1000); "
                   "latency counts from the intended send time")
      ->delimiter(',');
  bench->add_option("--arrival", flags->arrival, "Open loop: constant or poisson arrivals")
      ->check(CLI::IsMember({"constant", "poisson"}))
      ->capture_default_str();
  bench
      ->add_option("--open-loop-workers", flags->open_loop_workers,
                   "Open loop: connections available to send due requests")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  bench->add_option("--warmup-s", flags->warmup_s, "Warm-up seconds per level (not measured)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  bench
      ->add_option("--warmup-requests", flags->warmup_requests,
                   "Warm-up by request count instead of time")
      ->check(CLI::NonNegativeNumber);
  bench->add_option("--duration-s", flags->duration_s, "Measurement seconds per level")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--requests", flags->requests, "Measure this many requests instead")
      ->check(CLI::PositiveNumber);
  bench
      ->add_option("-b,--batch-size", flags->batch_size,
                   "Rows per request for models with a batch dimension")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--shape", flags->shapes,
                    "NAME:d1,d2,... for inputs with variable dimensions (repeatable)");
  bench->add_option("--input", flags->inputs,
                    "NAME=PATH: input from a .npy or raw little-endian file (repeatable)");
  bench->add_option("--input-dir", flags->input_dir,
                    "Dataset folder: one .npy/.bin per sample, or one folder per sample with "
                    "<input>.npy|.bin");
  bench
      ->add_option("--random-samples", flags->random_samples,
                   "Distinct random input samples to cycle through")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bench
      ->add_option("--sample-order", flags->sample_order,
                   "cycle: each connection walks the samples in order; zipf: each request draws "
                   "its sample from a Zipf distribution (sample k with probability ∝ 1/k^s)")
      ->check(CLI::IsMember({"cycle", "zipf"}))
      ->capture_default_str();
  bench->add_option("--zipf-s", flags->zipf_s, "Zipf exponent s for --sample-order zipf")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  bench->add_option("--request-parameter", flags->request_parameters,
                    "NAME:VALUE[:TYPE] sent with every request, TYPE string (default), int or "
                    "bool; e.g. cache_control:bypass (repeatable)");
  bench->add_option("--string-length", flags->string_length, "Length of random BYTES elements")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  bench->add_option("--output-name", flags->outputs, "Output to request (repeatable; default all)");
  bench->add_option("--auth-token-file", flags->auth_token_file,
                    "File holding the bearer token to send (mode 600); default: the "
                    "BRIGADE_TOKEN environment variable, if set");
  bench->add_flag("--ssl", flags->ssl,
                  "Connect over TLS (HTTPS or gRPC with TLS; also an https:// --url)");
  bench->add_option("--root-cert", flags->root_cert,
                    "PEM roots that verify the server's certificate (default: the system's; "
                    "implies --ssl)");
  bench->add_option("--client-cert", flags->client_cert,
                    "PEM client certificate for a server that requires mutual TLS (implies --ssl)");
  bench->add_option("--client-key", flags->client_key, "PEM key of --client-cert");
  bench->add_option("--timeout-ms", flags->timeout_ms, "Per-request timeout (0 = none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  bench->add_flag("--no-server-stats", flags->no_server_stats,
                  "Do not read the statistics extension (no server-side breakdown)");
  bench->add_option("-f,--format", flags->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  bench->add_option("-o,--output", flags->output, "Write the report to this file (default stdout)");
  bench->add_flag("--progress", flags->progress, "Show the live progress line even without a TTY");
  bench->add_flag("--no-progress", flags->no_progress, "Never show the progress line");
  bench->add_option("--seed", flags->seed, "Seed for random inputs and Poisson arrivals")
      ->capture_default_str();
  bench->callback([flags, exit_code] { *exit_code = RunBenchCommand(*flags); });
}

const CommandRegistration kBenchRegistration(20, RegisterBenchCommand);

}  // namespace brigade::tools
