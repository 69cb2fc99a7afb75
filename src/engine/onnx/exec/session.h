#ifndef BRIGADE_ENGINE_ONNX_EXEC_SESSION_H_
#define BRIGADE_ENGINE_ONNX_EXEC_SESSION_H_

// Session: one instance's executor of a CompiledModel. It keeps a cache of ExecutionPlans keyed
// by the input signature (element types, shapes, and the contents of shape inputs), one arena
// sized for the largest plan, and its own oneDNN stream. The first run of a signature builds its
// plan (kernels, primitives, memory plan); later runs of it allocate only their output tensors.
//
// The cache is bounded (Options::max_plans, least recently used evicted), so a client cycling
// through batch sizes cannot grow memory without bound.
//
// Batch splitting: when the model's output rows depend only on the same input rows
// (batch_split.h) and a batch's intermediates would overflow Options::split_budget_bytes, Run
// executes it in equal chunks that fit and concatenates the outputs (same numbers; the chunks'
// outputs are allocated and copied once more). A batch of one decides the chunk size.
//
// Thread safety: a Session is used by one thread at a time (its instance's thread).
// Errors: INVALID_ARGUMENT naming the input at fault (count, type, rank or a dimension that
// contradicts the model), or the node that failed.

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/execution_plan.h"

namespace brigade::engine::onnx {

class Session {
 public:
  struct Options {
    // Intra-op threads (OpenMP / oneDNN) used inside Run; >= 1.
    int threads = 1;
    // Plans kept; the least recently used is dropped beyond this.
    size_t max_plans = 16;
    // Accumulate per-step wall times of the plan in use (step_ns()); for benchmarks.
    bool profile = false;
    // Largest arena a plan may need; a signature needing more fails with RESOURCE_EXHAUSTED
    // instead of letting a hostile shape exhaust the machine's memory.
    size_t max_arena_bytes = size_t{8} << 30;
    // Batch splitting budget (see above); 0 never splits. nullopt: half the L3 cache with one
    // thread, no splitting with more (chunks cost a barrier per layer each).
    std::optional<size_t> split_budget_bytes;
  };

  static absl::StatusOr<std::unique_ptr<Session>> Create(std::shared_ptr<const CompiledModel> model,
                                                         Options options);

  // Runs the model on `inputs` (graph input order) and fills `outputs` (graph output order).
  absl::Status Run(std::span<const Tensor> inputs, std::vector<Tensor>* outputs);

  // Number of cached plans and the arena size (for tests and inspect).
  size_t plan_count() const { return plans_.size(); }
  size_t arena_bytes() const { return arena_.byte_size(); }
  // Steps of the plan the last Run used (null before the first run); a split run used it once
  // per chunk.
  const ExecutionPlan* last_plan() const { return last_plan_; }
  // Conv/matmul FLOPs of the last Run (all its chunks).
  int64_t last_run_flops() const { return last_run_flops_; }
  // Rows per chunk of the last Run (its batch when it was not split).
  int64_t last_chunk_rows() const { return last_chunk_rows_; }
  // With Options::profile: nanoseconds spent per step of last_plan() over the runs since the
  // last reset (a plan change resets it).
  const std::vector<int64_t>& step_ns() const { return step_ns_; }
  void ResetProfile() { step_ns_.assign(step_ns_.size(), 0); }

 private:
  struct Token {};

 public:
  Session(Token, std::shared_ptr<const CompiledModel> model, Options options, dnnl::stream stream,
          size_t split_budget_bytes)
      : model_(std::move(model)),
        options_(options),
        stream_(std::move(stream)),
        split_budget_bytes_(split_budget_bytes) {}

 private:
  absl::Status ValidateInputs(std::span<const Tensor> inputs) const;
  void MakeKey(std::span<const Tensor> inputs, std::vector<int64_t>* key) const;
  // The cached plan for `inputs`' signature, built (and the arena grown) on first use.
  absl::StatusOr<ExecutionPlan*> PlanFor(std::span<const Tensor> inputs);
  absl::Status RunPlan(ExecutionPlan& plan, std::span<const Tensor> inputs,
                       std::vector<Tensor>* outputs);
  // Rows per chunk for `inputs` (their batch when they are not to be split).
  int64_t ChunkRowsFor(std::span<const Tensor> inputs);
  absl::Status RunSplit(std::span<const Tensor> inputs, int64_t chunk_rows,
                        std::vector<Tensor>* outputs);

  struct Entry {
    std::unique_ptr<ExecutionPlan> plan;
    std::list<std::vector<int64_t>>::iterator lru;
  };

  std::shared_ptr<const CompiledModel> model_;
  const Options options_;
  dnnl::stream stream_;
  absl::flat_hash_map<std::vector<int64_t>, Entry> plans_;
  std::list<std::vector<int64_t>> lru_;  // most recent first
  std::vector<int64_t> key_;             // reused
  Tensor arena_;
  const ExecutionPlan* last_plan_ = nullptr;
  std::vector<int64_t> step_ns_;
  const size_t split_budget_bytes_;
  int64_t last_run_flops_ = 0;
  int64_t last_chunk_rows_ = 0;
  std::vector<Tensor> chunk_inputs_;                // reused by split runs
  std::vector<std::vector<Tensor>> chunk_outputs_;  // reused by split runs
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_SESSION_H_
