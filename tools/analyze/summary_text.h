#ifndef BRIGADE_TOOLS_ANALYZE_SUMMARY_TEXT_H_
#define BRIGADE_TOOLS_ANALYZE_SUMMARY_TEXT_H_

// Plain-text views of an Analysis, shared by the console output and the reports:
//   SloText             "p99 ≤ 30 ms, accuracy drop ≤ 1.00 pt" (unset bounds left out);
//   RecommendationText  the chosen point and why, or "no point meets the SLO" with the nearest
//                       candidates and what each misses by;
//   FormatPointTable    one row per measured point (variant, knobs, load, p50/p90/p99,
//                       throughput, accuracy, frontier/feasible marks, error);
//   MachineText         the cores and how much other work ran on them during the sweep, with a
//                       warning when it was enough to make the latencies noisy.
//
// Pure functions; thread-safe.

#include <string>

#include "tools/analyze/analysis.h"

namespace brigade::analyze {

std::string SloText(const Slo& slo);

std::string RecommendationText(const Analysis& analysis);

std::string FormatPointTable(const Analysis& analysis);

// Other processes using this many cores on average during the sweep make its latencies noisy.
inline constexpr double kBusyOtherCores = 0.2;

// "2 cores; other processes used 0.03 cores on average during the sweep (load average 0.10 when
// it began)", followed by a warning sentence when other work reached kBusyOtherCores.
std::string MachineText(const AnalysisSettings& settings);
bool MachineWasBusy(const AnalysisSettings& settings);

// "91.92%" or "-" for NaN.
std::string PercentText(double fraction);
// "2.31" or "-" for NaN.
std::string MsText(double ms);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_SUMMARY_TEXT_H_
