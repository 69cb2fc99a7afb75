#include "tools/analyze/summary_text.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace brigade::analyze {
namespace {

std::string PointLine(const Analysis& analysis, size_t index) {
  const PointResult& point = analysis.points[index];
  return fmt::format("{}: p99 {} ms, p50 {} ms, {:.1f} requests/s, accuracy {}",
                     analysis.PointLabel(index), MsText(point.p99_ms), MsText(point.p50_ms),
                     point.throughput_per_s, PercentText(point.accuracy));
}

}  // namespace

std::string PercentText(double fraction) {
  if (std::isnan(fraction)) return "-";
  return fmt::format("{:.2f}%", fraction * 100);
}

std::string MsText(double ms) {
  if (std::isnan(ms)) return "-";
  return fmt::format("{:.2f}", ms);
}

bool MachineWasBusy(const AnalysisSettings& settings) {
  return settings.other_cores_busy >= kBusyOtherCores;
}

std::string MachineText(const AnalysisSettings& settings) {
  auto number = [](double value) {
    return std::isnan(value) ? std::string("unknown") : fmt::format("{:.2f}", value);
  };
  std::string text = fmt::format(
      "{} cores; other processes used {} cores on average during the sweep (load average {} when "
      "it began)",
      settings.cores, number(settings.other_cores_busy), number(settings.load_average_start));
  if (MachineWasBusy(settings)) {
    text +=
        ". Other work competed with the server and the load generator, so latencies are "
        "noisy: rerun on a quiet machine before relying on them";
  }
  return text;
}

std::string SloText(const Slo& slo) {
  std::vector<std::string> parts;
  if (std::isfinite(slo.max_p99_ms)) parts.push_back(fmt::format("p99 ≤ {:g} ms", slo.max_p99_ms));
  if (std::isfinite(slo.max_accuracy_drop)) {
    parts.push_back(fmt::format("accuracy drop ≤ {:.2f} pt", slo.max_accuracy_drop * 100));
  }
  if (slo.min_throughput_per_s > 0) {
    parts.push_back(fmt::format("throughput ≥ {:g}/s", slo.min_throughput_per_s));
  }
  if (parts.empty()) return "no bounds";
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string RecommendationText(const Analysis& analysis) {
  const Recommendation& recommendation = analysis.recommendation;
  const Slo& slo = analysis.settings.slo;
  std::string text;
  switch (recommendation.status) {
    case Recommendation::Status::kNoValidPoints:
      return "No point was measured successfully, so nothing can be recommended.\n";
    case Recommendation::Status::kChosen:
      text = StrCat("Recommended (", SloText(slo), ", most ", GoalName(analysis.settings.goal),
                    "; ", recommendation.feasible.size(), " of ", analysis.points.size(),
                    " points meet the SLO):\n  ", PointLine(analysis, recommendation.chosen), "\n");
      if (!analysis.recommended_config_path.empty()) {
        text += StrCat("  config: ", analysis.recommended_config_path, "\n");
      }
      return text;
    case Recommendation::Status::kNoPointMeetsSlo:
      text = StrCat("No point meets the SLO (", SloText(slo), "; accuracy baseline ",
                    PercentText(recommendation.baseline_accuracy), "). Nearest:\n");
      for (const Shortfall& miss : recommendation.nearest) {
        text += StrCat("  ", PointLine(analysis, miss.index), "\n    ",
                       DescribeShortfall(miss, analysis.points[miss.index].objectives(), slo,
                                         recommendation.baseline_accuracy),
                       "\n");
      }
      return text;
  }
  return text;
}

std::string FormatPointTable(const Analysis& analysis) {
  std::string text = fmt::format(
      "{:>3}  {:<22} {:>4} {:<13} {:>4} {:>7}  {:<14} {:>8} {:>8} {:>8} "
      "{:>9} {:>9}  {}\n",
      "#", "variant", "mb", "batching", "inst", "threads", "load", "p50 ms", "p90 ms", "p99 ms",
      "req/s", "accuracy", "marks");
  const Recommendation& recommendation = analysis.recommendation;
  for (size_t i = 0; i < analysis.points.size(); ++i) {
    const PointResult& point = analysis.points[i];
    const ConfigResult& config = analysis.configs[point.config];
    std::string marks;
    if (recommendation.status == Recommendation::Status::kChosen && recommendation.chosen == i) {
      marks += "recommended ";
    }
    if (ListsPoint(analysis.frontier, i)) marks += "frontier ";
    if (ListsPoint(recommendation.feasible, i)) marks += "meets-SLO ";
    if (!point.error.empty()) marks += StrCat("error: ", point.error.substr(0, 80));
    const std::string threads = config.config.threads == 0
                                    ? StrCat("auto(", config.config.effective_threads, ")")
                                    : StrCat(config.config.threads);
    text += fmt::format(
        "{:>3}  {:<22} {:>4} {:<13} {:>4} {:>7}  {:<14} {:>8} {:>8} {:>8} {:>9} {:>9}  {}\n", i,
        config.variant, config.config.max_batch_size, config.config.policy.Label(),
        config.config.instances, threads, Analysis::LoadLabel(point), MsText(point.p50_ms),
        MsText(point.p90_ms), MsText(point.p99_ms),
        std::isnan(point.throughput_per_s) ? std::string("-")
                                           : fmt::format("{:.1f}", point.throughput_per_s),
        PercentText(point.accuracy), marks);
  }
  return text;
}

}  // namespace brigade::analyze
