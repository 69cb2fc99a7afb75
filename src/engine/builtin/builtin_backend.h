#ifndef BRIGADE_ENGINE_BUILTIN_BUILTIN_BACKEND_H_
#define BRIGADE_ENGINE_BUILTIN_BUILTIN_BACKEND_H_

// BuiltinBackend (platform "brigade_builtin", backend "brigade"): models computed by a few lines
// of C++ instead of a model file. They exist to measure the server itself — serving overhead with
// a near-zero compute time, and scheduling behaviour with a controlled one — the way Triton's
// identity backend is used. Selected in config.pbtxt:
//
//   backend: "brigade"
//   parameters { key: "op" value { string_value: "identity" } }   # or "add_sub"
//   parameters { key: "compute_us" value { string_value: "500" } } # optional busy time per batch
//
//   identity  output i = input i (same type and shape); outputs are named by the config, or
//             OUTPUT<i> when the config declares none.
//   add_sub   Triton's "simple" model: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1,
//             elementwise, FP32 or INT32.
//   compute_us  spins (not sleeps) for this long per Execute plus `compute_us_per_row` per batch
//             row, so a batch of b rows costs compute_us + b * compute_us_per_row of CPU, like a
//             real model that amortizes fixed cost over a batch.
//
// The version directory needs no model file (an empty directory is a valid version).
// Thread safety: as engine::Model. Failure: INVALID_ARGUMENT for unknown ops, missing input
// declarations, or inputs whose types/shapes the op cannot combine.

#include <memory>

#include "engine/backend.h"

namespace brigade::engine {

class BuiltinBackend final : public Backend {
 public:
  std::string_view name() const override { return "brigade"; }
  std::string_view platform() const override { return "brigade_builtin"; }
  std::string_view default_model_filename() const override { return ""; }
  absl::StatusOr<std::shared_ptr<Model>> Load(const ModelLoadOptions& options) override;
};

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_BUILTIN_BUILTIN_BACKEND_H_
