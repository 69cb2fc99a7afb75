#include "tools/analyze/html_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/strings.h"
#include "tools/analyze/summary_text.h"
#include "tools/analyze/svg_chart.h"

namespace brigade::analyze {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

constexpr char kStyle[] = R"(
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:12.5px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right;white-space:nowrap}
th{background:#f4f4f4}td.l,th.l{text-align:left}
table.settings td,td.marks{white-space:normal;word-break:break-word}
tr.frontier td{background:#eef6ff}tr.recommended td{background:#fff4c2;font-weight:600}
tr.error td{color:#a33}#busy-machine{color:#a33;font-weight:600}
.box{border:1px solid #ccc;border-radius:6px;padding:10px 14px;background:#fafafa}
.ok{border-color:#3a7d44;background:#f1f8f1}.miss{border-color:#c0392b;background:#fdf1f0}
pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:12px}
.note{color:#666;font-size:12.5px}figure{margin:12px 0}
)";

std::string H(std::string_view text) { return XmlEscape(text); }

std::string ColorOf(int variant) {
  return kPalette[static_cast<size_t>(variant) % std::size(kPalette)];
}

bool IsRecommended(const Analysis& analysis, size_t point) {
  return analysis.recommendation.status == Recommendation::Status::kChosen &&
         analysis.recommendation.chosen == point;
}

std::string PointTitle(const Analysis& analysis, size_t index) {
  const PointResult& point = analysis.points[index];
  return fmt::format("#{} {}\np99 {} ms, p50 {} ms, {:.1f}/s, accuracy {}", index,
                     analysis.PointLabel(index), MsText(point.p99_ms), MsText(point.p50_ms),
                     point.throughput_per_s, PercentText(point.accuracy));
}

ChartPoint MakePoint(const Analysis& analysis, size_t index, double x, double y) {
  return ChartPoint{.x = x,
                    .y = y,
                    .title = PointTitle(analysis, index),
                    .id = StrCat(index),
                    .highlight = ListsPoint(analysis.frontier, index),
                    .star = IsRecommended(analysis, index)};
}

std::string LatencyAccuracyChart(const Analysis& analysis) {
  ScatterChart chart;
  chart.id = "latency-accuracy";
  chart.title =
      StrCat("Latency–accuracy frontier (",
             analysis.settings.metric == "agreement" ? "agreement with " : "accuracy",
             analysis.settings.metric == "agreement" ? analysis.settings.reference : "", ")");
  chart.x = {.label = "p99 latency (ms)", .auto_log = true};
  chart.y = {.label = analysis.settings.metric == "agreement" ? "agreement" : "top-1 accuracy",
             .percent = true};
  std::vector<Objectives> two_d;
  for (size_t v = 0; v < analysis.variants.size(); ++v) {
    ChartSeries series{.name = analysis.variants[v].name, .color = ColorOf(static_cast<int>(v))};
    for (size_t i = 0; i < analysis.points.size(); ++i) {
      const PointResult& point = analysis.points[i];
      if (analysis.configs[point.config].config.variant != static_cast<int>(v)) continue;
      if (!IsValid(point.objectives())) continue;
      series.points.push_back(MakePoint(analysis, i, point.p99_ms, point.accuracy));
    }
    chart.series.push_back(std::move(series));
  }
  // The two-objective frontier (p99 ↓, accuracy ↑) as a staircase.
  for (const PointResult& point : analysis.points) {
    two_d.push_back({point.p99_ms, 0, point.accuracy});
  }
  std::vector<size_t> frontier = ParetoFrontier(two_d);
  std::sort(frontier.begin(), frontier.end(),
            [&](size_t a, size_t b) { return two_d[a].p99_ms < two_d[b].p99_ms; });
  ChartSeries staircase{.name = "latency–accuracy frontier",
                        .color = "#555",
                        .line = true,
                        .dashed = true,
                        .markers = false};
  for (size_t k = 0; k < frontier.size(); ++k) {
    const Objectives& point = two_d[frontier[k]];
    if (k > 0) {
      staircase.points.push_back({.x = point.p99_ms, .y = two_d[frontier[k - 1]].accuracy});
    }
    staircase.points.push_back({.x = point.p99_ms, .y = point.accuracy});
  }
  chart.series.push_back(std::move(staircase));
  const Slo& slo = analysis.settings.slo;
  if (std::isfinite(slo.max_p99_ms)) {
    chart.guides.push_back({.vertical = true,
                            .value = slo.max_p99_ms,
                            .label = fmt::format("SLO p99 {:g} ms", slo.max_p99_ms)});
  }
  const double baseline = analysis.recommendation.baseline_accuracy;
  if (std::isfinite(slo.max_accuracy_drop) && std::isfinite(baseline)) {
    chart.guides.push_back(
        {.vertical = false,
         .value = baseline - slo.max_accuracy_drop,
         .label = fmt::format("max drop {:.2f} pt", slo.max_accuracy_drop * 100)});
  }
  return RenderScatterChart(chart);
}

std::string ThroughputLatencyChart(const Analysis& analysis) {
  ScatterChart chart;
  chart.id = "throughput-latency";
  chart.title = "Throughput–latency curves (one line per configuration across load levels)";
  chart.x = {.label = "throughput (requests/s)"};
  chart.y = {.label = "p99 latency (ms)", .auto_log = true};
  std::map<int, bool> variant_listed;
  for (size_t c = 0; c < analysis.configs.size(); ++c) {
    const int variant = analysis.configs[c].config.variant;
    ChartSeries series{.name = analysis.variants[static_cast<size_t>(variant)].name,
                       .color = ColorOf(variant),
                       .line = true,
                       .legend = !variant_listed[variant]};
    variant_listed[variant] = true;
    for (size_t i = 0; i < analysis.points.size(); ++i) {
      const PointResult& point = analysis.points[i];
      if (point.config != c || !IsValid(point.objectives())) continue;
      series.points.push_back(MakePoint(analysis, i, point.throughput_per_s, point.p99_ms));
    }
    std::sort(series.points.begin(), series.points.end(),
              [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; });
    chart.series.push_back(std::move(series));
  }
  if (std::isfinite(analysis.settings.slo.max_p99_ms)) {
    chart.guides.push_back(
        {.vertical = false,
         .value = analysis.settings.slo.max_p99_ms,
         .label = fmt::format("SLO p99 {:g} ms", analysis.settings.slo.max_p99_ms)});
  }
  return RenderScatterChart(chart);
}

std::string StageBreakdownChart(const Analysis& analysis) {
  StackedBarChart chart;
  chart.id = "stage-breakdown";
  chart.title = "Where a request's time goes (server statistics, means per request)";
  chart.value_label = "mean time per request (ms)";
  chart.width = 1000;
  chart.kinds = {{"queue", "#9467bd"},         {"compute input", "#8c564b"},
                 {"compute infer", "#2ca02c"}, {"compute output", "#bcbd22"},
                 {"other server", "#7f7f7f"},  {"client + network", "#1f77b4"}};
  constexpr double kMs = 1e-6;
  for (size_t i = 0; i < analysis.points.size(); ++i) {
    const PointResult& point = analysis.points[i];
    if (!point.server.has_value() || point.server->requests == 0 || std::isnan(point.mean_ms)) {
      continue;
    }
    const loadgen::ServerBreakdown& server = *point.server;
    const double other = server.request_ns - server.queue_ns - server.compute_ns();
    chart.bars.push_back({.label = analysis.PointLabel(i),
                          .values = {server.queue_ns * kMs, server.compute_input_ns * kMs,
                                     server.compute_infer_ns * kMs, server.compute_output_ns * kMs,
                                     other * kMs, point.mean_ms - server.request_ns * kMs}});
  }
  if (chart.bars.empty()) {
    return "<p class=\"note\">No point has server statistics (the statistics extension did not "
           "answer), so there is no stage breakdown.</p>\n";
  }
  return RenderStackedBarChart(chart);
}

std::string RecommendationSection(const Analysis& analysis) {
  const Recommendation& recommendation = analysis.recommendation;
  const bool chosen = recommendation.status == Recommendation::Status::kChosen;
  std::string html = fmt::format("<div class=\"box {}\" id=\"recommendation\"><pre>{}</pre>",
                                 chosen ? "ok" : "miss", H(RecommendationText(analysis)));
  if (chosen) {
    const PointResult& point = analysis.points[recommendation.chosen];
    html += fmt::format("<p>config.pbtxt{}:</p><pre id=\"recommended-config\">{}</pre>",
                        analysis.recommended_config_path.empty()
                            ? std::string()
                            : StrCat(" (written to ", H(analysis.recommended_config_path), ")"),
                        H(analysis.configs[point.config].config_text));
  }
  return html + "</div>\n";
}

std::string SettingsSection(const Analysis& analysis) {
  const AnalysisSettings& settings = analysis.settings;
  std::string metric =
      settings.metric == "agreement"
          ? StrCat("agreement of top-1 predictions with variant ", settings.reference)
          : StrCat("top-1 accuracy on the labels",
                   settings.reference.empty()
                       ? std::string(" (drop measured from the best variant)")
                       : StrCat(" (drop measured from ", settings.reference, ")"));
  return fmt::format(
      "<table class=\"settings\"><tr><th class=l>evaluation set</th><td class=l>{}</td></tr>"
      "<tr><th class=l>metric</th><td class=l>{}</td></tr>"
      "<tr><th class=l>load</th><td class=l>{}; {} row(s) per request; warm-up {:g} s, "
      "measurement {:g} s per level; HTTP with binary tensors</td></tr>"
      "<tr><th class=l>SLO</th><td class=l>{}; pick the most {}</td></tr>"
      "<tr><th class=l>machine</th><td class=l{}>{} (the server and the load generator share "
      "the cores)</td></tr>"
      "<tr><th class=l>command</th><td class=l><code>{}</code></td></tr></table>\n",
      H(settings.eval_description), H(metric), H(settings.load_description),
      settings.rows_per_request, settings.warmup_s, settings.duration_s, H(SloText(settings.slo)),
      GoalName(settings.goal), MachineWasBusy(settings) ? " id=busy-machine" : "",
      H(MachineText(settings)), H(settings.command_line));
}

std::string VariantsSection(const Analysis& analysis) {
  std::string html =
      "<table id=\"variants\"><tr><th class=l>variant</th><th class=l>platform</th>"
      "<th class=l>model directory</th><th>accuracy</th><th>examples</th><th>eval s</th>"
      "<th class=l>error</th></tr>\n";
  for (size_t v = 0; v < analysis.variants.size(); ++v) {
    const VariantResult& variant = analysis.variants[v];
    html += fmt::format(
        "<tr><td class=l><span style=\"color:{}\">●</span> {}</td><td class=l>{}</td>"
        "<td class=l>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td class=l>{}</td></tr>\n",
        ColorOf(static_cast<int>(v)), H(variant.name), H(variant.platform), H(variant.model_dir),
        PercentText(variant.accuracy), variant.examples, variant.eval_seconds, H(variant.error));
  }
  return html + "</table>\n";
}

std::string PointsSection(const Analysis& analysis) {
  std::string html =
      "<table id=\"points\"><tr><th>#</th><th class=l>variant</th><th>max batch</th>"
      "<th class=l>batching</th><th>instances</th><th>threads</th><th class=l>load</th>"
      "<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>requests/s</th><th>accuracy</th>"
      "<th>mean batch</th><th class=l>marks</th></tr>\n";
  const Recommendation& recommendation = analysis.recommendation;
  for (size_t i = 0; i < analysis.points.size(); ++i) {
    const PointResult& point = analysis.points[i];
    const ServingConfig& config = analysis.configs[point.config].config;
    std::string row_class;
    std::string marks;
    if (IsRecommended(analysis, i)) {
      row_class = "recommended";
      marks += "★ recommended ";
    } else if (ListsPoint(analysis.frontier, i)) {
      row_class = "frontier";
    }
    if (ListsPoint(analysis.frontier, i)) marks += "frontier ";
    if (ListsPoint(recommendation.feasible, i)) marks += "meets SLO ";
    if (!point.error.empty()) {
      row_class = "error";
      marks += point.error;
    }
    const std::string threads = config.threads == 0
                                    ? StrCat("auto (", config.effective_threads, ")")
                                    : StrCat(config.threads);
    const std::string batch = point.server.has_value() && point.server->executions > 0
                                  ? fmt::format("{:.2f}", point.server->mean_batch_size)
                                  : std::string("-");
    html += fmt::format(
        "<tr class=\"{}\" data-id=\"{}\"><td>{}</td><td class=l>{}</td><td>{}</td>"
        "<td class=l>{}</td><td>{}</td><td>{}</td><td class=l>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l marks\">{}</td></tr>\n",
        row_class, i, i, H(analysis.configs[point.config].variant), config.max_batch_size,
        H(config.policy.Label()), config.instances, threads, H(Analysis::LoadLabel(point)),
        MsText(point.p50_ms), MsText(point.p90_ms), MsText(point.p99_ms),
        std::isnan(point.throughput_per_s) ? std::string("-")
                                           : fmt::format("{:.1f}", point.throughput_per_s),
        PercentText(point.accuracy), batch, H(marks));
  }
  return html + "</table>\n";
}

std::string SkippedSection(const Analysis& analysis) {
  if (analysis.skipped.empty()) return "";
  std::string html = "<h2>Skipped configurations</h2><ul class=\"note\">\n";
  for (const SkippedConfig& skipped : analysis.skipped) {
    const size_t variant = static_cast<size_t>(skipped.config.variant);
    html += fmt::format(
        "<li>{} {}: {}</li>\n",
        variant < analysis.variants.size() ? H(analysis.variants[variant].name) : std::string(),
        H(skipped.config.Label()), H(skipped.reason));
  }
  return html + "</ul>\n";
}

}  // namespace

std::string FormatHtmlReport(const Analysis& analysis) {
  std::string names;
  for (const VariantResult& variant : analysis.variants) {
    names += StrCat(names.empty() ? "" : ", ", variant.name);
  }
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>brigade analyze: {}</title><style>{}</style></head><body>\n"
      "<h1>brigade analyze: {}</h1>\n<p class=\"note\">{} points ({} configurations × load "
      "levels), {} on the Pareto frontier over p99 latency, throughput and accuracy.</p>\n",
      H(names), kStyle, H(names), analysis.points.size(), analysis.configs.size(),
      analysis.frontier.size());
  html += "<h2>Recommendation</h2>\n" + RecommendationSection(analysis);
  html += "<h2>Settings</h2>\n" + SettingsSection(analysis);
  html += "<h2>Variants</h2>\n" + VariantsSection(analysis);
  html += "<h2>Charts</h2>\n<figure>" + LatencyAccuracyChart(analysis) + "</figure>\n";
  html += "<figure>" + ThroughputLatencyChart(analysis) + "</figure>\n";
  html += "<figure>" + StageBreakdownChart(analysis) + "</figure>\n";
  html +=
      "<p class=\"note\">Latencies are measured by the client, end to end (send to last byte). "
      "The stage breakdown is the server's statistics extension over each measurement window "
      "(means per request; compute infer charges each request its whole batch); \"client + "
      "network\" is the client's mean latency minus the server's own request time. Outlined "
      "markers are on the three-objective frontier.</p>\n";
  html += "<h2>All points</h2>\n" + PointsSection(analysis);
  html += SkippedSection(analysis);
  html += "</body></html>\n";
  return html;
}

}  // namespace brigade::analyze
