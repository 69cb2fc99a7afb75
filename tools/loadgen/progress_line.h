#ifndef BRIGADE_TOOLS_LOADGEN_PROGRESS_LINE_H_
#define BRIGADE_TOOLS_LOADGEN_PROGRESS_LINE_H_

// ProgressLine: the benchmark's live status, one line rewritten in place on a terminal:
//   concurrency 16  measure  3.2/5.0 s  41,203 ok  12,876 req/s  0 errors
// Written to `out` (stderr in the tool, which shows it only on a TTY or with --progress).
//
// Thread safety: called from the runner's thread only. `out` is borrowed and must outlive it.

#include <cstdio>

#include "tools/loadgen/bench_runner.h"

namespace brigade::loadgen {

class ProgressLine final : public ProgressSink {
 public:
  explicit ProgressLine(FILE* out) : out_(out) {}

  void Update(const Progress& progress) override;
  void Done() override;

 private:
  FILE* const out_;
};

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_PROGRESS_LINE_H_
