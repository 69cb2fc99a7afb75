#ifndef BRIGADE_REPOSITORY_WARMUP_H_
#define BRIGADE_REPOSITORY_WARMUP_H_

// The inputs a new model version runs before it takes traffic.
//
// With `model_warmup` in the config (Triton's schema): each entry's inputs by name, at its
// batch_size, `count` times; data from zero_data, random_data (fixed seed) or input_data_file
// (raw little-endian bytes under <model_dir>/warmup/, as Triton reads them). Such a warm-up is
// required: if it fails, the version does not load. An entry must name every input except the
// optional ones (the signature's TensorSpec::optional); an omitted optional input is an empty
// Tensor, as when a request omits it.
// Without it: zero-filled inputs at batch size 1 and at max_batch_size. When those are requests
// the model must take (every dimension but the batch one fixed, no BYTES input), a failure fails
// the load with the warm-up's error, since every request of that shape would fail alike; when
// they are a guess (a variable dimension set to 1, empty strings for BYTES), the failure is only
// logged and the version loads (give such a model a model_warmup with real data).
// Sizes are bounded before anything is allocated: one run's inputs take at most kMaxWarmupBytes
// together (a BYTES element counts its length prefix and the string it is built from). An
// automatic run past the bound is skipped, with a note; a configured one fails the plan
// (RESOURCE_EXHAUSTED naming the warm-up and the input). An input_data_file is a plain name that
// must resolve, links and all, inside <model_dir>/warmup/ (the canonical-prefix check of
// core/plain_file.h), a regular file, and is read only when it is no larger than its tensor.
// Pure apart from reading warm-up files; thread-safe.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "engine/model.h"
#include "protocol/model_config.pb.h"
#include "scheduler/scheduler.h"

namespace brigade::repository {

// Largest total size of one warm-up run's inputs.
inline constexpr size_t kMaxWarmupBytes = size_t{256} << 20;

struct WarmupPlan {
  // Each run says whether its failure fails the load (scheduler::WarmupRun::required).
  std::vector<scheduler::WarmupRun> runs;
  // Automatic runs left out, and why (for the load's log).
  std::vector<std::string> skipped;
};

absl::StatusOr<WarmupPlan> BuildWarmupPlan(const config::ModelConfig& config,
                                           const engine::ModelSignature& signature,
                                           const std::string& model_dir);

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_WARMUP_H_
