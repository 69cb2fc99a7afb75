// scheduler_bench: the Scheduler in-process under open-loop Poisson arrivals, comparing batch
// policies at fractions of measured capacity. Printed, never asserted.
//
// The model is either the builtin identity backend with a controlled cost (default: a batch of b
// rows spins compute_us + b * per_row_us of CPU, engine/builtin/builtin_backend.h), or a real
// model from a Triton-layout directory (--model_dir=<repo>/<model>: its config.pbtxt and version
// 1, loaded through repository::ModelVersion with the server's backends, so TorchScript and ONNX
// models run exactly as `brigade serve` runs them). Either way `instances` instance threads run it,
// pinned, each with `intra_op_threads` compute threads. For each load (fraction of the capacity
// measured first with full batches) and each configuration, arrivals are drawn from an
// exponential distribution (fixed seed) and issued on schedule whether or not earlier requests
// finished (open loop), the generator waking at most once per --tick_us; a request's latency runs
// from its *scheduled* arrival to its answer, so a late generator counts against the server, never
// for it. The first `warmup_s` of each run is excluded (the adaptive policies learn their profile
// there). Every run starts a fresh scheduler (and, for a real model, a freshly loaded and
// warmed-up version).
//
// Columns: throughput counts successful answers given during the measured window; p50/p99 are
// over successful answers; shed = refused (queue full, predicted late) or timed out; shed p99 is
// shown from the client's view (scheduled arrival → refusal, so it includes the generator's own
// lateness) and the server's (Enqueue → refusal answered, as the bound of its histogram bucket);
// "OK within SLO" is the share of all measured arrivals answered successfully within slo_us;
// "busy" is the instances' share of the run (first arrival to last answer, warm-up included)
// spent executing batches, from the scheduler's measured service times. It says how much room a
// policy had to choose: a model with a large per-batch cost can be near 100% busy at "80%" of the
// capacity measured with full batches, since smaller batches cost more per row. "stolen" is the
// CPU time the hypervisor gave other guests while this VM wanted to run (/proc/stat's steal, in
// 10 ms ticks): on a VM one stolen tick backs up ~10 ms of arrivals, which at 85-98% busy takes
// tens of ms to drain and can set a 5-second run's p99 by itself.
//
//   scheduler_bench [--model_dir=DIR] [--compute_us=2000] [--per_row_us=500] [--max_batch=N]
//                   [--instances=2] [--intra_op_threads=1] [--slo_us=50000] [--seconds=4]
//                   [--warmup_s=1] [--delays_us=0,2000,8000] [--loads=50,80,95,120] [--seed=1]
//                   [--capacity_per_s=R] [--capacity_s=2]
//                   [--configs=none,fixed,formula,p99,p99_admission] [--explain_profile=1]
//                   [--tick_us=100]
//
// --max_batch defaults to 16 for the builtin model and to the config's max_batch_size for a real
// one (a smaller value caps it). Capacity (100% load) is the best saturated throughput over batch
// caps 1, 2, 4, ..., max_batch, each measured for capacity_s seconds. --capacity_per_s skips the
// capacity measurement (so a table can be produced in several invocations against the same 100%).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/strings.h"
#include "engine/builtin/builtin_backend.h"
#include "protocol/model_config_parser.h"
#include "repository/model_version.h"
#include "scheduler/scheduler.h"
#include "server/default_backends.h"
#include "tools/analyze/machine_load.h"

namespace brigade::bench {
namespace {

struct Flags {
  std::string model_dir;
  int64_t compute_us = 2000;
  int64_t per_row_us = 500;
  int max_batch = 0;  // 0 = 16 (builtin) or the config's
  int instances = 2;
  int intra_op_threads = 1;
  int64_t slo_us = 50000;
  double seconds = 4;
  double warmup_s = 1;
  std::vector<int64_t> delays_us = {0, 2000, 8000};
  std::vector<int64_t> loads = {50, 80, 95, 120};
  uint64_t seed = 1;
  // Requests per second that count as 100% load; 0 = measure it first, capacity_s per batch cap.
  double capacity_per_s = 0;
  double capacity_s = 2;
  // Configurations to run (none, fixed, formula, p99, p99_admission); empty = all.
  std::vector<std::string> configs;
  // Print the P99-model runs' pooled latency profile after their explain line.
  bool explain_profile = false;
  // The generator wakes at most once per tick and issues every request whose scheduled arrival
  // has passed (0 = one wake-up per request). See RunLoad.
  int64_t tick_us = 100;
};

std::vector<int64_t> ParseList(std::string_view text) {
  std::vector<int64_t> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    int64_t value = 0;
    if (ParseInteger(text.substr(0, comma), &value)) out.push_back(value);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    const size_t eq = arg.find('=');
    if (arg.substr(0, 2) != "--" || eq == std::string_view::npos) {
      std::fprintf(stderr, "bad flag %s\n", argv[i]);
      return false;
    }
    const std::string_view key = arg.substr(2, eq - 2);
    const std::string_view value = arg.substr(eq + 1);
    bool ok = true;
    if (key == "model_dir") {
      flags->model_dir = std::string(value);
    } else if (key == "intra_op_threads") {
      ok = ParseInteger(value, &flags->intra_op_threads);
    } else if (key == "compute_us") {
      ok = ParseInteger(value, &flags->compute_us);
    } else if (key == "per_row_us") {
      ok = ParseInteger(value, &flags->per_row_us);
    } else if (key == "max_batch") {
      ok = ParseInteger(value, &flags->max_batch);
    } else if (key == "instances") {
      ok = ParseInteger(value, &flags->instances);
    } else if (key == "slo_us") {
      ok = ParseInteger(value, &flags->slo_us);
    } else if (key == "seconds") {
      ok = ParseDouble(value, &flags->seconds);
    } else if (key == "warmup_s") {
      ok = ParseDouble(value, &flags->warmup_s);
    } else if (key == "delays_us") {
      flags->delays_us = ParseList(value);
    } else if (key == "loads") {
      flags->loads = ParseList(value);
    } else if (key == "configs") {
      for (std::string_view rest = value; !rest.empty();) {
        const size_t comma = rest.find(',');
        flags->configs.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
    } else if (key == "capacity_s") {
      ok = ParseDouble(value, &flags->capacity_s);
    } else if (key == "capacity_per_s") {
      ok = ParseDouble(value, &flags->capacity_per_s);
    } else if (key == "tick_us") {
      ok = ParseInteger(value, &flags->tick_us) && flags->tick_us >= 0;
    } else if (key == "seed") {
      ok = ParseInteger(value, &flags->seed);
    } else if (key == "explain_profile") {
      flags->explain_profile = value == "1" || value == "true";
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "bad flag %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

// One scheduler configuration under test.
struct Config {
  std::string name;
  bool batching = true;
  scheduler::BatchPolicyKind policy = scheduler::BatchPolicyKind::kFixedDelay;
  int64_t delay_us = 0;
  bool admission_control = false;
  // Rows per batch for this run; 0 = flags.max_batch.
  int max_rows = 0;
};

[[noreturn]] void Die(std::string_view what, const absl::Status& status) {
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(what.size()), what.data(),
               std::string(status.message()).c_str());
  std::exit(1);
}

// What the runs drive: a Scheduler over the builtin model, or a loaded ModelVersion (whose
// scheduler comes from its config, rewritten per Config).
class Target {
 public:
  virtual ~Target() = default;
  virtual void Enqueue(std::unique_ptr<InferRequest> request) = 0;
  virtual void Drain() = 0;
  virtual scheduler::SchedulerSnapshot Snapshot() const = 0;
};

class SchedulerTarget final : public Target {
 public:
  explicit SchedulerTarget(std::unique_ptr<scheduler::Scheduler> scheduler)
      : scheduler_(std::move(scheduler)) {}
  void Enqueue(std::unique_ptr<InferRequest> request) override {
    scheduler_->Enqueue(std::move(request));
  }
  void Drain() override { scheduler_->Drain(); }
  scheduler::SchedulerSnapshot Snapshot() const override { return scheduler_->Snapshot(); }

 private:
  std::unique_ptr<scheduler::Scheduler> scheduler_;
};

class VersionTarget final : public Target {
 public:
  explicit VersionTarget(std::shared_ptr<repository::ModelVersion> version)
      : version_(std::move(version)) {}
  void Enqueue(std::unique_ptr<InferRequest> request) override {
    version_->Enqueue(std::move(request));
  }
  void Drain() override { version_->Drain(); }
  // The bench drives models with a scheduler, never ensembles or routers.
  scheduler::SchedulerSnapshot Snapshot() const override { return *version_->scheduler_snapshot(); }

 private:
  std::shared_ptr<repository::ModelVersion> version_;
};

// The model under test and how to build a Target for one Config.
class Bench {
 public:
  explicit Bench(Flags* flags) : flags_(*flags) {
    if (flags->model_dir.empty()) {
      if (flags->max_batch <= 0) flags->max_batch = 16;
      LoadBuiltin();
    } else {
      LoadConfig(flags);
    }
  }

  std::unique_ptr<Target> Make(const Config& config) const {
    if (builtin_ != nullptr) return MakeBuiltin(config);
    return MakeVersion(config);
  }

  // One request's inputs (batch dimension 1, zeros).
  const std::vector<InferInput>& inputs() const { return inputs_; }
  const std::string& description() const { return description_; }

 private:
  void LoadBuiltin() {
    engine::ModelLoadOptions options;
    options.model_name = "bench";
    options.max_batch_size = flags_.max_batch;
    options.parameters["op"] = "identity";
    options.parameters["compute_us"] = std::to_string(flags_.compute_us);
    options.parameters["compute_us_per_row"] = std::to_string(flags_.per_row_us);
    options.declared_inputs = {{"INPUT0", DataType::kFp32, {-1, 1}}};
    options.declared_outputs = {{"OUTPUT0", DataType::kFp32, {-1, 1}}};
    engine::BuiltinBackend backend;
    absl::StatusOr<std::shared_ptr<engine::Model>> model = backend.Load(options);
    if (!model.ok()) Die("cannot load the builtin model", model.status());
    builtin_ = *std::move(model);
    inputs_.push_back({"INPUT0", *Tensor::Zeros(DataType::kFp32, {1, 1}), {}});
    description_ = StrCat("builtin identity, batch cost ", flags_.compute_us, " + ",
                          flags_.per_row_us, "*rows us");
  }

  void LoadConfig(Flags* flags) {
    std::string dir = flags->model_dir;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string name = dir.substr(dir.find_last_of('/') + 1);
    absl::StatusOr<protocol::ParsedConfig> parsed = protocol::ReadModelConfigFile(dir, name);
    if (!parsed.ok()) Die("cannot read the model config", parsed.status());
    config_ = parsed->config;
    if (config_.max_batch_size() <= 0) {
      Die("cannot benchmark batching",
          absl::InvalidArgumentError(StrCat("model '", name, "' has no max_batch_size")));
    }
    if (flags->max_batch <= 0 || flags->max_batch > config_.max_batch_size()) {
      flags->max_batch = config_.max_batch_size();
    }
    config_.set_max_batch_size(flags->max_batch);
    model_dir_ = dir;
    backends_ = MakeDefaultBackendRegistry();
    // Load once to learn the inputs (the config may leave them to the backend).
    std::shared_ptr<repository::ModelVersion> probe = LoadVersion(config_);
    for (const repository::IoSpec& spec : probe->inputs()) {
      Shape shape = spec.model_shape;
      for (int64_t& dim : shape) dim = dim < 0 ? 1 : dim;
      absl::StatusOr<Tensor> zeros = Tensor::Zeros(spec.dtype, shape);
      if (!zeros.ok()) Die("cannot build an input", zeros.status());
      inputs_.push_back({spec.name, *std::move(zeros), {}});
    }
    probe->Drain();
    description_ = StrCat("model '", name, "' (", probe->platform(), ")");
  }

  std::shared_ptr<repository::ModelVersion> LoadVersion(config::ModelConfig config) const {
    config.clear_instance_group();
    auto* group = config.add_instance_group();
    group->set_count(flags_.instances);
    group->set_kind(config::ModelInstanceGroup::KIND_CPU);
    group->set_intra_op_threads(flags_.intra_op_threads);
    absl::Status valid = protocol::ValidateModelConfig(config.name(), &config);
    if (!valid.ok()) Die("invalid benchmark config", valid);
    repository::ModelVersion::Options options;
    options.model_dir = model_dir_;
    options.version = 1;
    options.config = std::move(config);
    options.backends = backends_.get();
    options.pin_threads = true;
    absl::StatusOr<std::shared_ptr<repository::ModelVersion>> version =
        repository::ModelVersion::Load(std::move(options));
    if (!version.ok()) Die("cannot load the model", version.status());
    return *std::move(version);
  }

  std::unique_ptr<Target> MakeVersion(const Config& bench) const {
    config::ModelConfig config = config_;
    config.clear_dynamic_batching();
    config.clear_adaptive_batching();
    if (bench.max_rows > 0) config.set_max_batch_size(bench.max_rows);
    if (bench.batching && bench.policy == scheduler::BatchPolicyKind::kFixedDelay) {
      config.mutable_dynamic_batching()->set_max_queue_delay_microseconds(
          static_cast<uint64_t>(bench.delay_us));
    } else if (bench.batching) {
      auto* adaptive = config.mutable_adaptive_batching();
      adaptive->set_policy(bench.policy == scheduler::BatchPolicyKind::kQueueFormula
                               ? config::ModelAdaptiveBatching::QUEUE_FORMULA
                               : config::ModelAdaptiveBatching::P99_MODEL);
      adaptive->set_target_p99_microseconds(static_cast<uint64_t>(flags_.slo_us));
    }
    if (bench.admission_control) config.mutable_dynamic_batching()->set_admission_control(true);
    return std::make_unique<VersionTarget>(LoadVersion(std::move(config)));
  }

  std::unique_ptr<Target> MakeBuiltin(const Config& config) const {
    scheduler::Scheduler::Options options;
    options.model_name = "bench";
    options.instance_count = flags_.instances;
    options.intra_op_threads = flags_.intra_op_threads;
    options.pin_threads = true;
    options.queue.max_batch_size = config.max_rows > 0 ? config.max_rows : flags_.max_batch;
    options.queue.dynamic_batching = config.batching;
    options.queue.max_queue_delay_us = config.delay_us;
    options.queue.max_queue_size = 1024;
    options.queue.policy = config.policy;
    options.queue.target_p99_us = flags_.slo_us;
    options.queue.admission_control = config.admission_control;
    auto stats = std::make_shared<telemetry::ModelStats>("bench", "1", flags_.max_batch);
    auto scheduler = scheduler::Scheduler::Create(options, builtin_, std::move(stats));
    if (!scheduler.ok()) Die("cannot start the scheduler", scheduler.status());
    return std::make_unique<SchedulerTarget>(*std::move(scheduler));
  }

  const Flags& flags_;
  std::shared_ptr<engine::Model> builtin_;
  std::string model_dir_;
  config::ModelConfig config_;
  std::unique_ptr<engine::BackendRegistry> backends_;
  std::vector<InferInput> inputs_;
  std::string description_;
};

// Per-request outcome, written by the answering thread into its own slot.
struct Outcome {
  int64_t arrival_ns = 0;
  std::atomic<int64_t> done_ns{0};
  std::atomic<int> code{-1};
};

std::unique_ptr<InferRequest> MakeRequest(const Bench& bench, Outcome* outcome,
                                          std::atomic<int64_t>* answered) {
  auto request = std::make_unique<InferRequest>();
  request->model_name = "bench";
  request->inputs = bench.inputs();
  request->on_complete = [outcome, answered](const absl::StatusOr<InferResponse>& result) {
    outcome->code.store(static_cast<int>(result.status().code()), std::memory_order_relaxed);
    outcome->done_ns.store(Clock::Real()->NowNs(), std::memory_order_release);
    answered->fetch_add(1, std::memory_order_acq_rel);
  };
  return request;
}

struct Result {
  double offered_per_s = 0;
  double throughput_per_s = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double shed_percent = 0;
  double shed_p99_us = 0;
  double mean_batch = 0;
  double slo_met_percent = 0;  // of all measured arrivals: answered OK within the SLO
  double busy_percent = 0;     // instances' time spent executing batches, of the whole run
  double stolen_ms = -1;       // CPU time the hypervisor took from this VM during the run
  scheduler::SchedulerSnapshot snapshot;
};

double Percentile(std::vector<int64_t>& values, double q) {
  if (values.empty()) return 0;
  const auto index =
      static_cast<size_t>(std::min<double>(static_cast<double>(values.size() - 1),
                                           std::ceil(q * static_cast<double>(values.size())) - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index),
                   values.end());
  return static_cast<double>(values[index]);
}

void WaitUntil(int64_t when_ns) {
  const int64_t now = Clock::Real()->NowNs();
  if (when_ns > now) std::this_thread::sleep_for(std::chrono::nanoseconds(when_ns - now));
}

// Open-loop Poisson arrivals at `rate_per_s` for flags.seconds.
Result RunLoad(const Flags& flags, const Config& config, const Bench& bench, double rate_per_s) {
  std::unique_ptr<Target> scheduler = bench.Make(config);
  // The hypervisor's steal time comes from /proc/stat (tools/analyze/machine_load.h).
  const absl::StatusOr<analyze::CpuSample> cpu_at_start = analyze::SampleCpu();
  std::mt19937_64 rng(flags.seed);
  std::exponential_distribution<double> gap_s(rate_per_s);
  const auto count = static_cast<size_t>(rate_per_s * flags.seconds * 1.2) + 16;
  std::vector<Outcome> outcomes(count);
  std::atomic<int64_t> answered{0};
  const int64_t start_ns = Clock::Real()->NowNs() + 1'000'000;
  const int64_t end_ns = start_ns + static_cast<int64_t>(flags.seconds * 1e9);
  const int64_t measure_from_ns = start_ns + static_cast<int64_t>(flags.warmup_s * 1e9);
  // The generator shares the measured cores. Waking once per request (26k times a second at 80%
  // of the TorchScript demo's capacity) preempts an instance thread at every arrival and costs
  // more CPU than the capacity measurement's generator did, so "80%" sat near the real limit and
  // runs tipped into backlogs at random. It wakes at most once per tick instead and issues what
  // is due, as a NIC's interrupt coalescing would deliver it; a request's latency still runs from
  // its scheduled arrival, so the tick's delay (< tick_us) counts against every configuration.
  const int64_t tick_ns = flags.tick_us * 1000;
  int64_t next_wake_ns = start_ns;
  double t_s = 0;
  size_t issued = 0;
  for (; issued < count; ++issued) {
    t_s += gap_s(rng);
    const int64_t arrival_ns = start_ns + static_cast<int64_t>(t_s * 1e9);
    if (arrival_ns >= end_ns) break;
    if (arrival_ns > Clock::Real()->NowNs()) {
      WaitUntil(std::max(arrival_ns, next_wake_ns));
      next_wake_ns = Clock::Real()->NowNs() + tick_ns;
    }
    outcomes[issued].arrival_ns = arrival_ns;
    scheduler->Enqueue(MakeRequest(bench, &outcomes[issued], &answered));
  }
  // Let the policy answer what is queued on its own terms before draining: Drain flushes the
  // queue in full batches without waiting, which is not the policy under test (for ResNet-50 a
  // flushed batch of 8 takes 600 ms, and its rows would be the p99 of a 20 s run).
  const int64_t give_up_ns = Clock::Real()->NowNs() + 120'000'000'000;
  while (answered.load(std::memory_order_acquire) < static_cast<int64_t>(issued) &&
         Clock::Real()->NowNs() < give_up_ns) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  scheduler->Drain();  // everything admitted is answered before Drain returns
  while (answered.load(std::memory_order_acquire) < static_cast<int64_t>(issued)) {
    std::this_thread::yield();
  }

  Result result;
  const absl::StatusOr<analyze::CpuSample> cpu_at_end = analyze::SampleCpu();
  if (cpu_at_start.ok() && cpu_at_end.ok()) {
    result.stolen_ms = (cpu_at_end->stolen_s - cpu_at_start->stolen_s) * 1e3;
  }
  result.snapshot = scheduler->Snapshot();
  std::vector<int64_t> ok_ns, shed_ns;
  size_t measured = 0, within_slo = 0, completed_in_window = 0;
  int64_t last_done_ns = start_ns;
  for (size_t i = 0; i < issued; ++i) {
    const Outcome& outcome = outcomes[i];
    const int64_t done_ns = outcome.done_ns.load();
    last_done_ns = std::max(last_done_ns, done_ns);
    const bool ok = outcome.code.load() == static_cast<int>(absl::StatusCode::kOk);
    // Throughput: successful answers given during the measurement window, whenever they arrived.
    if (ok && done_ns >= measure_from_ns && done_ns < end_ns) ++completed_in_window;
    if (outcome.arrival_ns < measure_from_ns) continue;
    ++measured;
    const int64_t latency_ns = done_ns - outcome.arrival_ns;
    if (ok) {
      ok_ns.push_back(latency_ns);
      if (latency_ns <= flags.slo_us * 1000) ++within_slo;
    } else {
      shed_ns.push_back(latency_ns);
    }
  }
  const double window_s = static_cast<double>(end_ns - measure_from_ns) / 1e9;
  result.offered_per_s = static_cast<double>(measured) / window_s;
  result.throughput_per_s = static_cast<double>(completed_in_window) / window_s;
  result.p50_ms = Percentile(ok_ns, 0.50) / 1e6;
  result.p99_ms = Percentile(ok_ns, 0.99) / 1e6;
  result.shed_percent = measured == 0 ? 0 : 100.0 * static_cast<double>(shed_ns.size()) / measured;
  result.shed_p99_us = Percentile(shed_ns, 0.99) / 1e3;
  result.slo_met_percent = measured == 0 ? 0 : 100.0 * static_cast<double>(within_slo) / measured;
  uint64_t rows = 0, batches = 0;
  for (size_t b = 0; b < result.snapshot.batch_rows.size(); ++b) {
    rows += b * result.snapshot.batch_rows[b];
    batches += result.snapshot.batch_rows[b];
  }
  result.mean_batch = batches == 0 ? 0 : static_cast<double>(rows) / static_cast<double>(batches);
  const double instance_span_us =
      static_cast<double>(last_done_ns - start_ns) / 1e3 * std::max(1, flags.instances);
  result.busy_percent =
      instance_span_us <= 0 ? 0 : 100.0 * result.snapshot.service.sum_us / instance_span_us;
  return result;
}

// Saturation throughput with batches of `rows` rows: keep the queue deep for capacity_s seconds
// (the first quarter not counted).
double MeasureCapacity(const Flags& flags, const Bench& bench, int rows) {
  Config config{"capacity", true, scheduler::BatchPolicyKind::kFixedDelay, 0, false, rows};
  std::unique_ptr<Target> scheduler = bench.Make(config);
  std::atomic<int64_t> answered{0};
  std::vector<Outcome> outcomes(1);
  const size_t depth = static_cast<size_t>(rows) * static_cast<size_t>(flags.instances) * 4;
  int64_t issued = 0;
  const int64_t start_ns = Clock::Real()->NowNs();
  const auto window_ns = static_cast<int64_t>(flags.capacity_s * 1e9);
  const int64_t end_ns = start_ns + window_ns;
  int64_t counted_from = -1, counted_at_ns = 0;
  while (Clock::Real()->NowNs() < end_ns) {
    while (issued - answered.load() < static_cast<int64_t>(depth)) {
      scheduler->Enqueue(MakeRequest(bench, &outcomes[0], &answered));
      ++issued;
    }
    if (counted_from < 0 && Clock::Real()->NowNs() > start_ns + window_ns / 4) {
      counted_from = answered.load();
      counted_at_ns = Clock::Real()->NowNs();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const int64_t done = answered.load();
  const int64_t now_ns = Clock::Real()->NowNs();
  scheduler->Drain();
  return static_cast<double>(done - counted_from) /
         (static_cast<double>(now_ns - counted_at_ns) / 1e9);
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;
  const Bench bench(&flags);
  std::vector<Config> configs;
  auto wanted = [&flags](std::string_view key) {
    return flags.configs.empty() ||
           std::find(flags.configs.begin(), flags.configs.end(), key) != flags.configs.end();
  };
  if (wanted("none")) {
    configs.push_back({"no batching", false, scheduler::BatchPolicyKind::kFixedDelay, 0, false});
  }
  if (wanted("fixed")) {
    for (int64_t delay_us : flags.delays_us) {
      configs.push_back({StrCat("fixed delay ", delay_us, " us"), true,
                         scheduler::BatchPolicyKind::kFixedDelay, delay_us, false});
    }
  }
  if (wanted("formula")) {
    configs.push_back(
        {"seeds' formula", true, scheduler::BatchPolicyKind::kQueueFormula, 0, false});
  }
  if (wanted("p99")) {
    configs.push_back({"p99 model", true, scheduler::BatchPolicyKind::kP99Model, 0, false});
  }
  if (wanted("p99_admission")) {
    configs.push_back(
        {"p99 model + admission", true, scheduler::BatchPolicyKind::kP99Model, 0, true});
  }

  // Capacity: the best saturated throughput over batch caps 1, 2, 4, ..., max_batch (a small
  // model may run more rows per second in small batches than in full ones).
  const bool measured = flags.capacity_per_s <= 0;
  double capacity = flags.capacity_per_s;
  std::string by_rows;
  for (int rows = 1; measured; rows = std::min(rows * 2, flags.max_batch)) {
    const double throughput = MeasureCapacity(flags, bench, rows);
    by_rows += StrCat(by_rows.empty() ? "" : ", ", rows, ": ", static_cast<int64_t>(throughput));
    capacity = std::max(capacity, throughput);
    if (rows == flags.max_batch) break;
  }
  std::printf(
      "# scheduler_bench: %s, max_batch %d, %d instances x %d intra-op threads, SLO p99 %lld us, "
      "%.1f s per run (%.1f s warm-up excluded)\n",
      bench.description().c_str(), flags.max_batch, flags.instances, flags.intra_op_threads,
      static_cast<long long>(flags.slo_us), flags.seconds, flags.warmup_s);
  if (measured) {
    std::printf("# saturated throughput (req/s) by batch cap: %s\n", by_rows.c_str());
  }
  std::printf("# %s capacity (best saturated throughput): %.0f req/s\n\n",
              measured ? "measured" : "given", capacity);
  std::printf(
      "| load | config | offered/s | throughput/s | p50 ms | p99 ms | shed %% | shed p99 us "
      "| mean batch | OK within SLO %% | busy %% | stolen ms |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int64_t load : flags.loads) {
    for (const Config& config : configs) {
      const Result r = RunLoad(flags, config, bench, capacity * static_cast<double>(load) / 100);
      const int64_t server_shed_us = r.snapshot.refusal_latency.QuantileBoundUs(0.99);
      std::printf(
          "| %lld%% | %s | %.0f | %.0f | %.2f | %.2f | %.1f | %.0f / %s | %.1f | %.1f | %.0f | %s "
          "|\n",
          static_cast<long long>(load), config.name.c_str(), r.offered_per_s, r.throughput_per_s,
          r.p50_ms, r.p99_ms, r.shed_percent, r.shed_p99_us,
          server_shed_us == 0 ? "-" : StrCat("<=", server_shed_us).c_str(), r.mean_batch,
          r.slo_met_percent, r.busy_percent,
          r.stolen_ms < 0 ? "-" : StrCat(static_cast<int64_t>(r.stolen_ms)).c_str());
      std::fflush(stdout);
      if (config.policy == scheduler::BatchPolicyKind::kP99Model) {
        const auto& s = r.snapshot;
        std::string reasons;
        for (int i = 1; i < scheduler::kNumBatchReasons; ++i) {
          if (s.reasons[static_cast<size_t>(i)] == 0) continue;
          reasons += StrCat(" ", scheduler::BatchReasonName(static_cast<scheduler::BatchReason>(i)),
                            "=", s.reasons[static_cast<size_t>(i)]);
        }
        std::printf(
            "|  |   ↳ explain: batches=%llu%s; refused late=%llu full=%llu; slower than predicted "
            "p99: %llu/%llu; mean |err p50| %.0f us |  |  |  |  |  |  |  |  |  |  |\n",
            static_cast<unsigned long long>(s.batches), reasons.c_str(),
            static_cast<unsigned long long>(s.refused_predicted_late),
            static_cast<unsigned long long>(s.refused_queue_full),
            static_cast<unsigned long long>(s.slower_than_predicted_p99),
            static_cast<unsigned long long>(s.predicted_batches),
            s.predicted_batches == 0 ? 0.0 : s.abs_error_p50_us_sum / s.predicted_batches);
        if (flags.explain_profile) {
          // The pooled profile the decisions used: rows → p50 (samples).
          std::string profile;
          for (const auto& point : s.profile) {
            if (point.instance != -1) continue;
            profile += StrCat(" ", point.rows, ":", point.p50_ns / 1000, "/", point.p99_ns / 1000,
                              "us(", static_cast<int64_t>(point.samples), ")");
          }
          std::printf("|  |   ↳ profile p50/p99:%s |  |  |  |  |  |  |  |  |  |  |\n",
                      profile.c_str());
        }
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace brigade::bench

int main(int argc, char** argv) { return brigade::bench::Main(argc, argv); }
