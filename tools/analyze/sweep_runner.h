#ifndef BRIGADE_TOOLS_ANALYZE_SWEEP_RUNNER_H_
#define BRIGADE_TOOLS_ANALYZE_SWEEP_RUNNER_H_

// RunSweep: measures every planned serving configuration against a real server. For each
// configuration, in plan order:
//   1. generate its config.pbtxt (config_generator.h) and lay out a one-model repository under
//      the work folder (point_repository.h);
//   2. start `brigade serve` on it on a free port (server_process.h) and read the model's
//      metadata;
//   3. the first time a variant is served, measure its accuracy on the evaluation set through
//      the server (accuracy.h: HTTP binary, top-1 against labels or against the reference
//      variant's predictions), and write the first examples, converted to the model's input,
//      as the load generator's dataset (one raw .bin file per request);
//   4. measure each load level with the load generator (client/loadgen: warm-up, then the
//      measured window; latency percentiles, throughput, errors, the server's stage breakdown
//      from its statistics extension) over HTTP binary;
//   5. stop the server and remove the repository (unless kept).
// At the end (unless kept) everything the sweep wrote under the work folder is removed, and the
// folder too when nothing else is left in it; other files there are never touched.
// A configuration that fails (config refused, server does not start, every request fails) is
// recorded with its error and the sweep goes on.
//
// Accuracy is measured once per variant: the swept knobs (batching, instances, threads) change
// when the model runs, not what it computes.
//
// Agreement mode needs the reference's predictions before any other variant's, so the caller
// lists the reference variant first (the analyzer does).
//
// Thread safety: blocks the calling thread; `progress` is called from it. Failure: only setup
// errors (the work folder cannot be created) end the sweep; everything else is recorded.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/model_config.pb.h"
#include "tools/analyze/analysis.h"
#include "tools/analyze/eval_set.h"
#include "tools/analyze/sweep_space.h"
#include "tools/loadgen/bench_runner.h"

namespace brigade::analyze {

// Progress of the sweep; also receives the load generator's per-level updates.
class SweepProgress : public loadgen::ProgressSink {
 public:
  // Configuration `index` of `total` begins.
  virtual void BeginConfig(size_t index, size_t total, std::string_view label) = 0;
  // A step inside the configuration: "starting server", "accuracy", "measuring".
  virtual void Step(std::string_view step) = 0;
  // The configuration ended; `summary` is one line ("p99 2.31 ms, 1,204/s" or the error).
  virtual void EndConfig(std::string_view summary) = 0;
};

struct SweepOptions {
  // The `brigade` executable and extra `serve` arguments.
  std::string brigade_binary{};
  std::vector<std::string> serve_args{};
  // Where point repositories and load inputs go (created when missing; must be writable).
  std::string work_dir{};
  bool keep_work_dir = false;
  int64_t server_start_timeout_ms = 120'000;

  // The load: mode, levels, warm-up and duration, rows per request (inputs.batch_size), open-loop
  // workers, seed. Address, model, protocol, inputs directory are set per configuration. Its
  // client's bearer token goes with every call to the servers (readiness, metadata, accuracy).
  loadgen::BenchOptions load{};
  // Requests' worth of examples the load generator cycles through.
  int load_samples = 64;

  // Accuracy: reference variant (agreement mode when `agreement`), output, rows per request,
  // example scale (NaN: DefaultScale for the model's input type).
  std::string reference{};
  bool agreement = false;
  std::string output_name{};
  int64_t eval_batch_rows = 32;
  double eval_scale = kNotMeasured;
};

struct SweepResult {
  std::vector<VariantResult> variants{};
  std::vector<ConfigResult> configs{};
  std::vector<PointResult> points{};
};

// `bases[v]` is the validated config of `space.variants[v]`.
absl::StatusOr<SweepResult> RunSweep(const SweepSpace& space, const SweepPlan& plan,
                                     const std::vector<config::ModelConfig>& bases,
                                     const EvalSet& eval, const SweepOptions& options,
                                     SweepProgress* progress);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_SWEEP_RUNNER_H_
