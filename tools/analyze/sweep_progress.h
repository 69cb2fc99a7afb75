#ifndef BRIGADE_TOOLS_ANALYZE_SWEEP_PROGRESS_H_
#define BRIGADE_TOOLS_ANALYZE_SWEEP_PROGRESS_H_

// ProgressBar: the sweep's progress on a terminal, one line rewritten in place:
//   [#######.............]  7/18  fashion_mnist mb=8 delay:200 i=1 t=1 · c=4 measure 1.2/2.0 s
// and, as each configuration ends, a permanent line with its result:
//   ✓ 7/18 fashion_mnist mb=8 delay:200 i=1 t=1: c=1 p99 1.92 ms 610/s | c=4 p99 4.10 ms 1121/s
// Written to `out` (stderr in the tool: shown on a TTY or with --progress).
//
// Thread safety: called from the sweep's thread only. `out` is borrowed and must outlive it.

#include <cstdio>
#include <string>

#include "tools/analyze/sweep_runner.h"

namespace brigade::analyze {

class ProgressBar final : public SweepProgress {
 public:
  explicit ProgressBar(FILE* out, int width = 20) : out_(out), width_(width) {}

  void BeginConfig(size_t index, size_t total, std::string_view label) override;
  void Step(std::string_view step) override;
  void EndConfig(std::string_view summary) override;
  void Update(const loadgen::Progress& progress) override;
  void Done() override {}

  // The bar for `done` of `total` ("[####......]"); exposed for tests.
  static std::string Bar(size_t done, size_t total, int width);

 private:
  void Draw(std::string_view detail);

  FILE* const out_;
  const int width_;
  size_t index_ = 0;
  size_t total_ = 0;
  std::string label_;
};

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_SWEEP_PROGRESS_H_
