#ifndef BRIGADE_OPTIMIZE_RECIPE_JOB_H_
#define BRIGADE_OPTIMIZE_RECIPE_JOB_H_

// What `brigade optimize prune` and `brigade optimize distill` do, start to end, as one library
// call so the verbs stay thin and tests can drive it:
//
//   find the recipe (recipe.h) ─► run it on MODEL and the training data, exporting into a work
//   folder beside -o ─► gate the exported ONNX against MODEL on the engine (gate.h: top-1 on
//   --eval/--eval-labels, widths, timing at batch 1 and 8) ─► passed (or --force): rename the
//   ONNX onto -o and the TorchScript onto --torchscript ─► remove the work folder
//
// Nothing half-written: the recipe writes only into a temporary folder in -o's directory (and a
// temporary file in --torchscript's), renamed at the end; a failure or a gate miss removes them.
// The gate is the quantizer's (evaluate.h's drop in points, --max-accuracy-drop, default 1).
//
// With --register, the written model also becomes a new model or version of a repository, its
// config carrying the gate's measurements (register.h).
//
// Thread safety: a free function; it blocks while the recipe trains (bounded by `timeout`).
// Errors: INVALID_ARGUMENT / NOT_FOUND naming the flag at fault (-o, --train, --eval, ...);
// FAILED_PRECONDITION when python3-torch is missing; DEADLINE_EXCEEDED past --recipe-timeout; a
// gate miss is not an error (RecipeJobReport::written is false).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "optimize/gate.h"
#include "optimize/register.h"

namespace brigade::optimize {

enum class RecipeKind { kPrune, kDistill };

struct RecipeJobOptions {
  RecipeKind kind = RecipeKind::kPrune;
  std::string model_path;        // the fp32 ONNX model (teacher, for distillation)
  std::string output_path;       // -o: the ONNX result
  std::string torchscript_path;  // --torchscript: the TorchScript result (optional)
  // The recipe's own flags (--ratio, --norm, --width, ...), checked by the verb, passed as is.
  std::vector<std::string> recipe_args;
  std::string train_path;
  std::string train_labels_path;
  int64_t train_samples = 0;  // 0: all
  std::string eval_path;
  std::string eval_labels_path;
  int64_t eval_samples = 0;
  double integer_scale = 1.0 / 255.0;
  double max_accuracy_drop = 1.0;
  bool force = false;
  int threads = 1;
  int time_iterations = 20;
  std::string python = "/usr/bin/python3";
  std::string recipe_dir;  // empty: beside the binary (recipe.h's FindRecipe)
  std::string exe_path;    // the binary, for FindRecipe
  absl::Duration timeout = absl::Hours(1);
  bool relay_progress = true;  // the recipe's stderr to ours
  // --register REPO [--register-name NAME]: also place the written model in a repository
  // (register.h), named after -o's file stem by default. A model not faster than fp32 at batch 1
  // is registered only with `force`.
  std::string register_repository;
  std::string register_name;
  const Clock* clock = Clock::Real();
};

struct RecipeJobReport {
  std::string recipe_path;
  std::string recipe_summary;  // the recipe's JSON line (stdout)
  double recipe_seconds = 0;
  GateReport gate;
  bool written = false;
  std::optional<Registration> registration;
  std::string not_registered;  // why, when --register was asked and it did not happen

  std::string Text(const RecipeJobOptions& options) const;
  std::string Json() const;
};

absl::StatusOr<RecipeJobReport> RunRecipeJob(const RecipeJobOptions& options);

std::string_view RecipeName(RecipeKind kind);

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_RECIPE_JOB_H_
