#include "tools/loadgen/bench_runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::loadgen {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;

// Counts finished workers; the runner waits with a timeout so it can update the progress line.
class Countdown {
 public:
  explicit Countdown(int count) : remaining_(count) {}
  void Arrive() {
    absl::MutexLock lock(&mu_);
    --remaining_;
  }
  // True when everyone arrived within `timeout`.
  bool WaitFor(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(this, &Countdown::AllArrived), timeout);
  }

 private:
  bool AllArrived() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return remaining_ == 0; }

  absl::Mutex mu_;
  int remaining_ ABSL_GUARDED_BY(mu_);
};

struct Worker {
  std::unique_ptr<client::Client> client;
  // SharedMemory::kSystem: the worker's region and its own specs. Declared after `client`, which
  // it unregisters through, so it goes first.
  std::unique_ptr<WorkerSharedMemory> shared_memory;
  WorkerStats warmup;
  WorkerStats measure;
  InferResponse response;
  size_t cursor = 0;
  SampleRng rng;
};

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::string LevelLabel(LoadMode mode, int workers, double rate) {
  if (mode == LoadMode::kClosedLoop) return StrCat("concurrency ", workers);
  return StrCat(LoadModeName(mode), " ", rate, "/s");
}

absl::Status ValidateOptions(const BenchOptions& options) {
  if (options.model_name.empty()) return absl::InvalidArgumentError("no model given");
  if (options.mode == LoadMode::kClosedLoop) {
    if (options.concurrency.empty()) return absl::InvalidArgumentError("no concurrency level");
    for (int c : options.concurrency) {
      if (c < 1 || c > 4096) {
        return absl::InvalidArgumentError(StrCat("concurrency ", c, " is not in [1, 4096]"));
      }
    }
  } else {
    if (options.rates.empty()) return absl::InvalidArgumentError("open-loop mode needs a rate");
    for (double rate : options.rates) {
      if (!(rate > 0)) return absl::InvalidArgumentError(StrCat("rate ", rate, " is not > 0"));
    }
    if (options.open_loop_workers < 1 || options.open_loop_workers > 4096) {
      return absl::InvalidArgumentError("open-loop workers must be in [1, 4096]");
    }
  }
  if (options.requests <= 0 && options.duration_ms <= 0) {
    return absl::InvalidArgumentError("give a measurement duration or a request count");
  }
  if (options.warmup_ms < 0 || options.warmup_requests < 0) {
    return absl::InvalidArgumentError("warm-up cannot be negative");
  }
  return absl::OkStatus();
}

std::optional<protocol::ModelStatistics> Snapshot(const BenchOptions& options,
                                                  client::Client& admin, std::string* note) {
  if (!options.server_stats) {
    *note = "statistics not requested";
    return std::nullopt;
  }
  absl::StatusOr<std::vector<protocol::ModelStatistics>> stats =
      admin.GetModelStatistics(options.model_name, options.model_version);
  if (!stats.ok()) {
    *note = StrCat("statistics unavailable: ", ToStd(stats.status().message()));
    return std::nullopt;
  }
  std::optional<protocol::ModelStatistics> sum = SumModel(*stats, options.model_name);
  if (!sum.has_value()) *note = "statistics do not list the model";
  return sum;
}

class LevelRun {
 public:
  LevelRun(const BenchOptions& options, const std::vector<client::InferSpec>& specs,
           const ZipfDistribution* zipf, LoadMode mode, int workers, double rate, uint64_t seed)
      : options_(options),
        specs_(specs),
        zipf_(zipf),
        mode_(mode),
        workers_(workers),
        rate_(rate),
        seed_(seed),
        label_(LevelLabel(mode, workers, rate)) {}

  absl::StatusOr<LevelResult> Run(client::Client& admin, ProgressSink* progress);

 private:
  void RunPhase(const Phase& phase, ArrivalSchedule* schedule, Worker& worker, WorkerStats* stats);
  void WaitWithProgress(Countdown& countdown, std::string_view phase_name, const Phase& phase,
                        bool warm, ProgressSink* progress);

  const BenchOptions& options_;
  const std::vector<client::InferSpec>& specs_;
  // Null: workers cycle through the samples.
  const ZipfDistribution* const zipf_;
  const LoadMode mode_;
  const int workers_;
  const double rate_;
  const uint64_t seed_;
  const std::string label_;
  std::vector<std::unique_ptr<Worker>> pool_;
};

void LevelRun::RunPhase(const Phase& phase, ArrivalSchedule* schedule, Worker& worker,
                        WorkerStats* stats) {
  auto issue = [this, &worker]() {
    const size_t index =
        zipf_ != nullptr ? zipf_->Sample(worker.rng) : worker.cursor++ % specs_.size();
    const client::InferSpec& spec =
        worker.shared_memory != nullptr ? worker.shared_memory->specs()[index] : specs_[index];
    return worker.client->Infer(spec, &worker.response);
  };
  if (mode_ == LoadMode::kClosedLoop) {
    RunClosedLoop(*options_.clock, phase, issue, stats);
  } else {
    RunOpenLoop(*options_.clock, *options_.waiter, phase, *schedule, issue, stats);
  }
}

void LevelRun::WaitWithProgress(Countdown& countdown, std::string_view phase_name,
                                const Phase& phase, bool warm, ProgressSink* progress) {
  while (!countdown.WaitFor(absl::Milliseconds(250))) {
    if (progress == nullptr) continue;
    Progress state;
    state.level = label_;
    state.phase = std::string(phase_name);
    state.elapsed_s = (options_.clock->NowNs() - phase.start_ns) * 1e-9;
    if (phase.max_requests >= 0) {
      state.planned_requests = phase.max_requests;
    } else if (phase.end_ns != std::numeric_limits<int64_t>::max()) {
      state.planned_s = (phase.end_ns - phase.start_ns) * 1e-9;
    }
    for (const std::unique_ptr<Worker>& worker : pool_) {
      const WorkerStats& stats = warm ? worker->warmup : worker->measure;
      state.done += stats.live_done.load(std::memory_order_relaxed);
      state.failed += stats.live_failed.load(std::memory_order_relaxed);
    }
    progress->Update(state);
  }
}

absl::StatusOr<LevelResult> LevelRun::Run(client::Client& admin, ProgressSink* progress) {
  for (int i = 0; i < workers_; ++i) {
    auto worker = std::make_unique<Worker>();
    BRIGADE_ASSIGN_OR_RETURN(worker->client, client::Client::Create(options_.client));
    if (options_.shared_memory == SharedMemory::kSystem) {
      BRIGADE_ASSIGN_OR_RETURN(worker->shared_memory,
                               WorkerSharedMemory::Create(worker->client.get(), specs_));
    }
    worker->cursor = static_cast<size_t>(i) % specs_.size();
    worker->rng.seed(seed_ * 1'000'003 + static_cast<uint64_t>(i));
    pool_.push_back(std::move(worker));
  }
  const ArrivalKind kind =
      mode_ == LoadMode::kPoisson ? ArrivalKind::kPoisson : ArrivalKind::kConstant;
  std::unique_ptr<ArrivalSchedule> warm_schedule;
  std::unique_ptr<ArrivalSchedule> measure_schedule;
  if (mode_ != LoadMode::kClosedLoop) {
    warm_schedule = std::make_unique<ArrivalSchedule>(kind, rate_, seed_);
    measure_schedule = std::make_unique<ArrivalSchedule>(kind, rate_, seed_ + 1);
  }
  // Open loop: how long past its planned end a level may run to send requests already due.
  auto drain_ns = [](int64_t span_ns) { return std::max<int64_t>(2'000 * kNsPerMs, span_ns / 2); };

  std::atomic<int64_t> warm_taken{0};
  std::atomic<int64_t> measure_taken{0};
  Phase warm;
  warm.start_ns = options_.clock->NowNs();
  warm.taken = &warm_taken;
  if (options_.warmup_requests > 0) {
    warm.max_requests = options_.warmup_requests;
    if (mode_ != LoadMode::kClosedLoop) {
      const auto span = static_cast<int64_t>(options_.warmup_requests / rate_ * 1e9);
      warm.drain_deadline_ns = warm.start_ns + span + drain_ns(span);
    }
  } else {
    warm.end_ns = warm.start_ns + options_.warmup_ms * kNsPerMs;
    warm.drain_deadline_ns = warm.end_ns + drain_ns(options_.warmup_ms * kNsPerMs);
  }
  Phase measure;  // filled in by this thread before `go` is notified
  measure.taken = &measure_taken;

  Countdown warmed(workers_);
  Countdown finished(workers_);
  absl::Notification go;
  std::vector<std::thread> threads;
  threads.reserve(pool_.size());
  for (const std::unique_ptr<Worker>& worker : pool_) {
    threads.emplace_back([&, w = worker.get()] {
      RunPhase(warm, warm_schedule.get(), *w, &w->warmup);
      warmed.Arrive();
      go.WaitForNotification();
      RunPhase(measure, measure_schedule.get(), *w, &w->measure);
      finished.Arrive();
    });
  }
  WaitWithProgress(warmed, "warm-up", warm, /*warm=*/true, progress);

  LevelResult result;
  result.mode = mode_;
  result.workers = workers_;
  result.target_rate = mode_ == LoadMode::kClosedLoop ? 0 : rate_;
  const std::optional<protocol::ModelStatistics> before =
      Snapshot(options_, admin, &result.server_note);
  const double cpu_before = ProcessCpuSeconds();
  measure.start_ns = options_.clock->NowNs();
  if (options_.requests > 0) {
    measure.max_requests = options_.requests;
    if (mode_ != LoadMode::kClosedLoop) {
      const auto span = static_cast<int64_t>(options_.requests / rate_ * 1e9);
      measure.drain_deadline_ns = measure.start_ns + span + drain_ns(span);
    }
  } else {
    measure.end_ns = measure.start_ns + options_.duration_ms * kNsPerMs;
    measure.drain_deadline_ns = measure.end_ns + drain_ns(options_.duration_ms * kNsPerMs);
  }
  go.Notify();
  WaitWithProgress(finished, "measure", measure, /*warm=*/false, progress);
  for (std::thread& thread : threads) thread.join();
  const double cpu_seconds = ProcessCpuSeconds() - cpu_before;
  if (progress != nullptr) progress->Done();
  for (const std::unique_ptr<Worker>& worker : pool_) {
    if (worker->shared_memory != nullptr) BRIGADE_RETURN_IF_ERROR(worker->shared_memory->Release());
  }

  std::string after_note;
  const std::optional<protocol::ModelStatistics> after = Snapshot(options_, admin, &after_note);
  if (before.has_value() && after.has_value()) {
    result.server = ComputeBreakdown(*before, *after);
    if (!result.server.has_value()) result.server_note = "statistics were reset during the run";
  } else if (result.server_note.empty()) {
    result.server_note = after_note;
  }

  WorkerStats total;
  for (const std::unique_ptr<Worker>& worker : pool_) total.Merge(worker->measure);
  result.ok = total.ok;
  result.failed = total.failed;
  result.unsent = total.unsent;
  result.errors = total.errors;
  result.latency.Merge(total.latency);
  result.service.Merge(total.service);
  result.send_lag.Merge(total.send_lag);
  const int64_t end_ns = std::max(total.last_done_ns, measure.start_ns + 1);
  result.elapsed_s = (end_ns - measure.start_ns) * 1e-9;
  result.throughput_per_s = result.ok / result.elapsed_s;
  const int64_t issued = result.ok + result.failed;
  result.client_cpu_us_per_request = issued > 0 ? cpu_seconds * 1e6 / issued : 0;
  return result;
}

}  // namespace

std::string_view LoadModeName(LoadMode mode) {
  switch (mode) {
    case LoadMode::kClosedLoop:
      return "closed";
    case LoadMode::kConstantRate:
      return "constant";
    case LoadMode::kPoisson:
      return "poisson";
  }
  return "closed";
}

absl::StatusOr<BenchReport> RunBench(const BenchOptions& options, ProgressSink* progress) {
  BRIGADE_RETURN_IF_ERROR(ValidateOptions(options));
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<client::Client> admin,
                           client::Client::Create(options.client));
  BenchReport report;
  BRIGADE_ASSIGN_OR_RETURN(report.model,
                           admin->GetModelMetadata(options.model_name, options.model_version));
  report.protocol = options.client.protocol;
  report.http_binary = options.http_binary;
  report.shared_memory = options.shared_memory;
  report.batch_size = options.inputs.batch_size;
  BRIGADE_ASSIGN_OR_RETURN(std::vector<Sample> samples, BuildSamples(report.model, options.inputs));
  report.samples = samples.size();
  report.sample_order = options.sample_order;
  std::optional<ZipfDistribution> zipf;
  if (options.sample_order == SampleOrder::kZipf) {
    BRIGADE_ASSIGN_OR_RETURN(zipf, ZipfDistribution::Create(samples.size(), options.zipf_exponent));
    report.zipf_exponent = options.zipf_exponent;
  }

  std::vector<client::InferSpec> specs;
  specs.reserve(samples.size());
  for (Sample& sample : samples) {
    client::InferSpec& spec = specs.emplace_back();
    spec.model_name = options.model_name;
    spec.model_version = options.model_version;
    spec.parameters = options.request_parameters;
    spec.inputs = std::move(sample);
    for (const std::string& output : options.outputs) {
      spec.outputs.push_back({.name = output, .parameters = {}, .binary = options.http_binary});
    }
    spec.binary_inputs = options.http_binary;
    spec.binary_outputs = options.http_binary;
  }

  const size_t levels =
      options.mode == LoadMode::kClosedLoop ? options.concurrency.size() : options.rates.size();
  for (size_t i = 0; i < levels; ++i) {
    const bool closed = options.mode == LoadMode::kClosedLoop;
    LevelRun run(options, specs, zipf.has_value() ? &*zipf : nullptr, options.mode,
                 closed ? options.concurrency[i] : options.open_loop_workers,
                 closed ? 0 : options.rates[i], options.seed + 2 * i);
    BRIGADE_ASSIGN_OR_RETURN(LevelResult result, run.Run(*admin, progress));
    report.levels.push_back(std::move(result));
  }
  return report;
}

}  // namespace brigade::loadgen
