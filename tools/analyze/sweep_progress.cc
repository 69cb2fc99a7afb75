#include "tools/analyze/sweep_progress.h"

#include "core/strings.h"

namespace brigade::analyze {

std::string ProgressBar::Bar(size_t done, size_t total, int width) {
  const size_t filled = total == 0 ? 0 : done * static_cast<size_t>(width) / total;
  std::string bar = "[";
  for (int i = 0; i < width; ++i) bar += static_cast<size_t>(i) < filled ? '#' : '.';
  return bar + "]";
}

void ProgressBar::Draw(std::string_view detail) {
  // \r returns to the line start; ESC[K clears what a longer previous line left behind.
  fmt::print(out_, "\r\033[K{} {:>3}/{}  {}  {}", Bar(index_, total_, width_), index_ + 1, total_,
             label_, detail);
  std::fflush(out_);
}

void ProgressBar::BeginConfig(size_t index, size_t total, std::string_view label) {
  index_ = index;
  total_ = total;
  label_ = std::string(label);
  Draw("");
}

void ProgressBar::Step(std::string_view step) { Draw(step); }

void ProgressBar::Update(const loadgen::Progress& progress) {
  std::string detail = StrCat(progress.level, " ", progress.phase, " ");
  if (progress.planned_s > 0) {
    detail += fmt::format("{:.1f}/{:.1f} s", progress.elapsed_s, progress.planned_s);
  } else {
    detail +=
        fmt::format("{}/{} requests", progress.done + progress.failed, progress.planned_requests);
  }
  Draw(detail);
}

void ProgressBar::EndConfig(std::string_view summary) {
  fmt::print(out_, "\r\033[K{:>3}/{} {}: {}\n", index_ + 1, total_, label_, summary);
  std::fflush(out_);
}

}  // namespace brigade::analyze
