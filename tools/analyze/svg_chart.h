#ifndef BRIGADE_TOOLS_ANALYZE_SVG_CHART_H_
#define BRIGADE_TOOLS_ANALYZE_SVG_CHART_H_

// Inline SVG charts for the analysis report, drawn here so the report is one self-contained file
// with no script or library: a scatter chart (points, optional connecting lines per series,
// guide lines for SLO bounds, highlighted points) and a horizontal stacked bar chart.
//
// Every element a test (or a reader's script) may look for carries a class: the chart's <svg>
// gets `class="chart"` and its id, markers `class="pt"` with `data-id`, series lines
// `class="series-line"`, guides `class="guide"`, bar segments `class="seg"`. Each marker and
// segment has a <title>, which browsers show as a tooltip.
//
// Axes: linear with "nice" ticks (1, 2, 5 × 10^k), or logarithmic (decades, with 2 and 5 between
// when at most two decades are shown) when asked or when `auto_log` and the data span more than
// 20×. Points with a non-finite coordinate, or ≤ 0 on a log axis, are left out.
//
// Pure functions; thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace brigade::analyze {

struct ChartPoint {
  double x = 0;
  double y = 0;
  // Shown as the marker's tooltip.
  std::string title{};
  // data-id attribute (e.g. the point's index in analysis.json); empty = none.
  std::string id{};
  // Drawn larger with a dark outline.
  bool highlight = false;
  // Drawn as a star with a label.
  bool star = false;
};

struct ChartSeries {
  std::string name{};
  std::string color{};
  std::vector<ChartPoint> points{};
  // Join the points in the order given (e.g. one configuration across load levels).
  bool line = false;
  bool dashed = false;
  // Draw markers (false: a line only, e.g. a frontier staircase).
  bool markers = true;
  // Listed in the legend (several series may share a name; the first one is listed).
  bool legend = true;
};

// A vertical (x = value) or horizontal (y = value) reference line.
struct ChartGuide {
  bool vertical = true;
  double value = 0;
  std::string label{};
};

struct ChartAxis {
  std::string label{};
  bool log = false;
  bool auto_log = false;
  std::optional<double> min{};
  std::optional<double> max{};
  // Format of tick labels, e.g. "{:g}" or "{:.0%}"-like percent (see percent).
  bool percent = false;
};

struct ScatterChart {
  std::string id{};
  std::string title{};
  int width = 760;
  int height = 440;
  ChartAxis x{};
  ChartAxis y{};
  std::vector<ChartSeries> series{};
  std::vector<ChartGuide> guides{};
};

std::string RenderScatterChart(const ScatterChart& chart);

struct BarSegmentKind {
  std::string name{};
  std::string color{};
};

struct StackedBar {
  std::string label{};
  // One value per segment kind (negative values count as 0).
  std::vector<double> values{};
};

struct StackedBarChart {
  std::string id{};
  std::string title{};
  // Unit label of the value axis, e.g. "mean time per request (ms)".
  std::string value_label{};
  int width = 760;
  std::vector<BarSegmentKind> kinds{};
  std::vector<StackedBar> bars{};
};

std::string RenderStackedBarChart(const StackedBarChart& chart);

// Ticks at 1, 2 or 5 × 10^k covering [min, max] with about `target` ticks (min < max).
std::vector<double> NiceTicks(double min, double max, int target);

// Decade ticks (and 2, 5 multiples when max / min ≤ 100) in [min, max],
// 0 < min < max.
std::vector<double> LogTicks(double min, double max);

// &, <, >, " and ' escaped for XML text and attributes.
std::string XmlEscape(std::string_view text);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_SVG_CHART_H_
