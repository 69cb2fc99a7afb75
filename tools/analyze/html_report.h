#ifndef BRIGADE_TOOLS_ANALYZE_HTML_REPORT_H_
#define BRIGADE_TOOLS_ANALYZE_HTML_REPORT_H_

// report.html: the analysis as one self-contained page (inline CSS and SVG, no script, nothing
// fetched), readable offline and attachable to a ticket:
//   * the recommendation (or "no point meets the SLO" with the nearest points and their
//     shortfalls) and the recommended config.pbtxt;
//   * the settings (evaluation set and metric, load, durations, cores and how busy other work
//     kept them, command line);
//   * the variants and their accuracy (or agreement);
//   * three charts (svg_chart.h):
//       #latency-accuracy   p99 against accuracy for every point, frontier points outlined, the
//                           latency–accuracy frontier as a staircase, SLO bounds as guides, the
//                           recommended point as a star;
//       #throughput-latency p99 against throughput, one line per configuration across the load
//                           levels;
//       #stage-breakdown    for each point, mean time per request by stage from the server's
//                           statistics (queue, compute input/infer/output, other server time)
//                           plus the client and network share (client mean − server time);
//   * every point in a table (frontier, meets-SLO and recommended rows marked; errors shown),
//     and the skipped configurations with the reason.
//
// Pure; thread-safe.

#include <string>

#include "tools/analyze/analysis.h"

namespace brigade::analyze {

std::string FormatHtmlReport(const Analysis& analysis);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_HTML_REPORT_H_
