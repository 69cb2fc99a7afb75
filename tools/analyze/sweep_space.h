#ifndef BRIGADE_TOOLS_ANALYZE_SWEEP_SPACE_H_
#define BRIGADE_TOOLS_ANALYZE_SWEEP_SPACE_H_

// The configuration space `brigade analyze` sweeps, and the plan of serving configurations it
// expands to: variants × max batch size × batching policy × instance count × intra-op threads.
//
// A batching policy is written on the command line as
//   none          no batching section: each request runs on its own, max_batch_size only caps
//                 what a single request may carry;
//   delay:US      dynamic_batching with max_queue_delay_microseconds US (Triton's rule);
//   p99:US        Brigade's adaptive_batching, policy P99_MODEL, target_p99_microseconds US;
//   formula       adaptive_batching, policy QUEUE_FORMULA (no latency target);
//   formula:US    QUEUE_FORMULA with target_p99_microseconds US capping the batch size.
//
// Planning drops points that cannot differ or should not run, and says why:
//   * max batch size 1 cannot form batches, so only one policy ("none") is kept for it;
//   * a variant whose config does not batch (max_batch_size 0) keeps max batch 0 and "none";
//   * a max batch size below the rows each request carries could not serve the load;
//   * instances × threads above the machine's cores is oversubscription (measured here: torch
//     17× slower), skipped unless allowed. Threads 0 means the server's default
//     (cores / instances, at least 1) and is counted as such.
//
// Pure functions and plain values; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade::analyze {

enum class BatchingKind { kNone, kFixedDelay, kP99Model, kQueueFormula };

struct BatchingPolicy {
  BatchingKind kind = BatchingKind::kNone;
  // kFixedDelay: max_queue_delay_microseconds.
  int64_t delay_us = 0;
  // kP99Model (required) and kQueueFormula (optional, 0 = none): target_p99_microseconds.
  int64_t target_p99_us = 0;

  // The command-line form above ("delay:200"); parses back to the same policy.
  std::string Label() const;
  bool operator==(const BatchingPolicy&) const = default;
};

// Parses one policy in the forms above; INVALID_ARGUMENT naming the text otherwise.
absl::StatusOr<BatchingPolicy> ParseBatchingPolicy(std::string_view text);

// One model variant of the task: a Triton model directory (config.pbtxt + version folders).
struct Variant {
  // The model's name (its config's name, which is also its directory's name in a repository).
  std::string name{};
  std::string model_dir{};
  // The variant's own max_batch_size (0: it does not batch).
  int base_max_batch_size = 0;
};

struct SweepSpace {
  std::vector<Variant> variants{};
  std::vector<int> max_batch_sizes{};
  std::vector<BatchingPolicy> policies{};
  std::vector<int> instance_counts{};
  // Intra-op threads per instance; 0 = the server's default.
  std::vector<int> threads{};
  // Rows each request carries: a max batch size below it cannot serve the load.
  int64_t rows_per_request = 1;
  // Cores of the machine the server runs on.
  int cores = 1;
  bool allow_oversubscription = false;
};

// One serving configuration: a variant and the knobs its config.pbtxt gets.
struct ServingConfig {
  // Index into SweepSpace::variants.
  int variant = 0;
  int max_batch_size = 1;
  BatchingPolicy policy{};
  int instances = 1;
  // As given (0 = default); effective_threads is what the server will use.
  int threads = 0;
  int effective_threads = 1;

  // "mb=8 delay:200 i=1 t=2" (without the variant's name).
  std::string Label() const;
};

struct SkippedConfig {
  ServingConfig config{};
  std::string reason{};
};

struct SweepPlan {
  // In sweep order: variant, max batch, policy, instances, threads (each in the order given).
  std::vector<ServingConfig> configs{};
  std::vector<SkippedConfig> skipped{};
};

// The server's intra-op threads for `threads` (0 = default) with `instances` instances.
int EffectiveThreads(int threads, int instances, int cores);

// Expands the space. INVALID_ARGUMENT when an axis is empty or holds a value out of range
// (max batch < 1, instances < 1, threads < 0, cores < 1), or when nothing is left to run.
absl::StatusOr<SweepPlan> PlanSweep(const SweepSpace& space);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_SWEEP_SPACE_H_
