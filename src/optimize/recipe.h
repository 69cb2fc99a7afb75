#ifndef BRIGADE_OPTIMIZE_RECIPE_H_
#define BRIGADE_OPTIMIZE_RECIPE_H_

// Running the Python training recipes (scripts/optimize/prune.py, distill.py) from C++: pruning
// and distillation need a training loop, which is torch's job, not the engine's, so `brigade
// optimize prune|distill` runs the recipe as a child process and gates what it exports.
//
// RunRecipe starts `python script args...` (no shell: the arguments are passed as they are),
// reads its stdout (the recipe's one JSON summary line) and its stderr (progress, relayed to ours
// as it arrives when asked, and kept for error messages), and bounds it: past `timeout` the
// child's process group is killed. The exit codes the recipes share (scripts/optimize/chain.py)
// become statuses:
//
//   0 OK (stdout returned)              2 INVALID_ARGUMENT (bad arguments or data)
//   3 FAILED_PRECONDITION (python3-torch/onnx/numpy missing)
//   4 INVALID_ARGUMENT (a model the recipe cannot read)   other: INTERNAL
//
// each with the child's last stderr line(s). A python that cannot be started is NOT_FOUND naming
// --python; a timeout is DEADLINE_EXCEEDED.
//
// FindRecipe resolves a recipe's file: in `recipe_dir` when given (--recipe-dir), else beside
// the binary: <exe dir>/../scripts/optimize (the build tree, build/brigade) and
// <exe dir>/../share/brigade/optimize (an installed tree).
//
// Thread safety: free functions; RunRecipe blocks the calling thread until the child ends.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"

namespace brigade::optimize {

// Exit codes of scripts/optimize/chain.py.
inline constexpr int kRecipeExitUsage = 2;
inline constexpr int kRecipeExitMissingModule = 3;
inline constexpr int kRecipeExitUnsupported = 4;

struct RecipeRun {
  // Debian's interpreter, where python3-torch is installed; a bare name is looked up in PATH.
  std::string python = "/usr/bin/python3";
  std::string script;
  std::vector<std::string> args;
  absl::Duration timeout = absl::Hours(1);
  bool relay_stderr = true;
  const Clock* clock = Clock::Real();  // reads the deadline; borrowed for the call
};

// Runs the recipe and returns its stdout (see above for the errors).
absl::StatusOr<std::string> RunRecipe(const RecipeRun& run);

// The path of `file` (e.g. "prune.py") as described above; NOT_FOUND listing where it looked.
absl::StatusOr<std::string> FindRecipe(std::string_view file, std::string_view recipe_dir,
                                       std::string_view exe_path);

// The running binary's path (/proc/self/exe), or "" when it cannot be read.
std::string SelfExecutablePath();

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_RECIPE_H_
