#include "tools/loadgen/progress_line.h"

#include "core/strings.h"

namespace brigade::loadgen {

void ProgressLine::Update(const Progress& progress) {
  std::string planned;
  if (progress.planned_s > 0) {
    planned = fmt::format("{:.1f}/{:.1f} s", progress.elapsed_s, progress.planned_s);
  } else {
    planned = fmt::format("{:.1f} s, {}/{} requests", progress.elapsed_s,
                          progress.done + progress.failed, progress.planned_requests);
  }
  const double rate = progress.elapsed_s > 0 ? progress.done / progress.elapsed_s : 0;
  // \r returns to the line start; ESC[K clears what a longer previous line left behind.
  fmt::print(out_, "\r\033[K{}  {}  {}  {} ok  {:.0f} req/s  {} errors", progress.level,
             progress.phase, planned, progress.done, rate, progress.failed);
  std::fflush(out_);
}

void ProgressLine::Done() {
  fmt::print(out_, "\r\033[K");
  std::fflush(out_);
}

}  // namespace brigade::loadgen
