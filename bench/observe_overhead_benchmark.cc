// Per-request cost of Brigade's observability on the request path, measured on vs off in one
// run (the budget: metrics on and tracing sampled at 1% cost <= 2 µs per request at p50):
//
//   BM_Observe/off              nothing recorded (the timing loop's own cost)
//   BM_Observe/metrics          ModelRequestMetrics::RecordRequest + RecordBatch
//   BM_Observe/metrics_by_name  the same through RequestMetrics::RecordRequest(model, version,
//                               ...) (lock-free handle lookup by name first)
//   BM_Observe/metrics_trace1   + Tracer::Finish at a 1% sample rate (spans built and queued
//                               for 1 request in 100; exported to /dev/null by the span
//                               processor's thread as OTLP JSON lines)
//   BM_Observe/all_1pct         + AccessLog::Record sampling 1% (to /dev/null)
//   BM_Observe/trace_always     metrics + every request traced (the sampled path's own cost)
//
// Each iteration records one request whose StageClock has all nine stamps (durations varied so
// every histogram bucket search is exercised). Besides Google Benchmark's mean time per
// iteration, each run times every request individually and reports p50_ns and p99_ns counters;
// subtract the `off` row's p50 (the clock reads) to get the observability cost at p50.
// Run with 2 threads too (->Threads(2)) to see the sharded cells under contention.
//
//   build/bench/observe_overhead_benchmark --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)

#include <algorithm>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/clock.h"
#include "core/strings.h"
#include "telemetry/access_log.h"
#include "telemetry/request_metrics.h"
#include "telemetry/span_processor.h"
#include "telemetry/trace_file_exporter.h"
#include "telemetry/tracer.h"

namespace brigade::telemetry {

enum class Mode { kOff = 0, kMetrics, kMetricsByName, kMetricsTrace1, kAll1, kTraceAlways };

namespace {

// Everything a server would hold, created once per process.
struct Observability {
  Observability() {
    request_metrics = *RequestMetrics::Create(&registry);
    model = request_metrics->ForModel("trivial", "1");
    for (double rate : {0.01, 1.0}) {
      processors.push_back(
          *SpanProcessor::Create({.max_queued_spans = 1 << 16, .registry = nullptr},
                                 *TraceFileExporter::Create("/dev/null", OtlpResource())));
      tracers.push_back(*Tracer::Create({.sample_rate = rate}, processors.back().get()));
    }
    access_log = *AccessLog::Create({.path = "/dev/null", .sample_rate = 0.01});
    // Stamps of 1024 requests: microsecond-scale stages like the trivial model's.
    for (int i = 0; i < 1024; ++i) {
      StageClock clock;
      int64_t t = 1'000'000'000 + int64_t{i} * 100'000;
      const int64_t steps[] = {
          0,   9'000 + i * 7, 1'500 + i % 13 * 100, 200, 3'000 + i * 31, 300, 1'000 + i % 7 * 150,
          400, 6'000 + i * 11};
      const Stage order[] = {Stage::kArrival,    Stage::kDecoded,       Stage::kPreprocessed,
                             Stage::kQueueEnter, Stage::kQueueLeave,    Stage::kInferStart,
                             Stage::kInferEnd,   Stage::kPostprocessed, Stage::kSent};
      for (int s = 0; s < 9; ++s) {
        t += steps[s];
        clock.Mark(order[s], t);
      }
      clocks.push_back(clock);
    }
  }

  MetricsRegistry registry;
  std::unique_ptr<RequestMetrics> request_metrics;
  ModelRequestMetrics* model = nullptr;
  std::vector<std::unique_ptr<SpanProcessor>> processors;
  std::vector<std::unique_ptr<Tracer>> tracers;  // [0] 1%, [1] always
  std::unique_ptr<AccessLog> access_log;
  std::vector<StageClock> clocks;
};

Observability& Shared() {
  static Observability* observability = new Observability();
  return *observability;
}

inline void RecordOne(Mode mode, Observability& o, const StageClock& clock) {
  if (mode == Mode::kOff) return;
  if (mode == Mode::kMetricsByName) {
    o.request_metrics->RecordRequest("trivial", "1", Protocol::kHttp, RequestOutcome::kSuccess,
                                     clock);
    o.model->RecordBatch(1);
    return;
  }
  o.model->RecordRequest(Protocol::kHttp, RequestOutcome::kSuccess, clock);
  o.model->RecordBatch(1);
  if (mode == Mode::kMetrics) return;
  const RequestTraceInfo info{.model = "trivial",
                              .version = "1",
                              .request_id = "r",
                              .protocol = Protocol::kHttp,
                              .batch_size = 1};
  const Tracer& tracer = *o.tracers[mode == Mode::kTraceAlways ? 1 : 0];
  const TraceResult trace = tracer.Finish(std::nullopt, info, clock);
  benchmark::DoNotOptimize(trace);
  if (mode != Mode::kAll1) return;
  o.access_log->Record({.request_id = "r",
                        .model = "trivial",
                        .version = "1",
                        .protocol = Protocol::kHttp,
                        .clock = clock});
}

void BM_Observe(benchmark::State& state, Mode mode) {
  Observability& o = Shared();
  const uint64_t dropped_before =
      o.processors[0]->dropped_spans() + o.processors[1]->dropped_spans();
  const Clock* clock = Clock::Real();
  std::vector<int64_t> samples_ns;
  samples_ns.reserve(1 << 20);
  size_t i = static_cast<size_t>(state.thread_index()) * 97;
  for (auto _ : state) {
    const StageClock& stamps = o.clocks[i++ & 1023];
    const int64_t start_ns = clock->NowNs();
    RecordOne(mode, o, stamps);
    const int64_t end_ns = clock->NowNs();
    if (samples_ns.size() < samples_ns.capacity()) samples_ns.push_back(end_ns - start_ns);
  }
  std::sort(samples_ns.begin(), samples_ns.end());
  // Per-thread percentiles, averaged over the threads (not summed).
  if (!samples_ns.empty()) {
    state.counters["p50_ns"] = benchmark::Counter(
        static_cast<double>(samples_ns[samples_ns.size() / 2]), benchmark::Counter::kAvgThreads);
    state.counters["p99_ns"] =
        benchmark::Counter(static_cast<double>(samples_ns[samples_ns.size() * 99 / 100]),
                           benchmark::Counter::kAvgThreads);
  }
  if (state.thread_index() == 0) {
    const uint64_t dropped = o.processors[0]->dropped_spans() + o.processors[1]->dropped_spans();
    state.counters["spans_dropped"] = static_cast<double>(dropped - dropped_before);
  }
}

}  // namespace
}  // namespace brigade::telemetry

int main(int argc, char** argv) {
  using brigade::telemetry::Mode;
  benchmark::Initialize(&argc, argv);
  const std::pair<const char*, Mode> modes[] = {
      {"off", Mode::kOff},
      {"metrics", Mode::kMetrics},
      {"metrics_by_name", Mode::kMetricsByName},
      {"metrics_trace1", Mode::kMetricsTrace1},
      {"all_1pct", Mode::kAll1},
      {"trace_always", Mode::kTraceAlways},
  };
  for (int threads : {1, 2}) {
    for (const auto& [name, mode] : modes) {
      benchmark::RegisterBenchmark(fmt::format("BM_Observe/{}", name).c_str(),
                                   brigade::telemetry::BM_Observe, mode)
          ->Threads(threads);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
