#include "tools/analyze/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/strings.h"

namespace brigade::analyze {
namespace {

constexpr int kMarginLeft = 78;
constexpr int kMarginRight = 24;
constexpr int kMarginTop = 58;
constexpr int kMarginBottom = 52;
constexpr char kFont[] = "font-family=\"system-ui,sans-serif\"";

struct Scale {
  double min = 0;
  double max = 1;
  bool log = false;
  double from_px = 0;
  double to_px = 1;

  double Map(double value) const {
    const double t =
        log ? (std::log10(value) - std::log10(min)) / (std::log10(max) - std::log10(min))
            : (value - min) / (max - min);
    return from_px + t * (to_px - from_px);
  }
  bool Accepts(double value) const { return std::isfinite(value) && (!log || value > 0); }
};

std::string Num(double value) { return fmt::format("{:.1f}", value); }

std::string TickText(double value, bool percent) {
  if (percent) return fmt::format("{:g}%", std::round(value * 100 * 1000) / 1000);
  if (std::fabs(value) < 1e-12) return "0";
  return fmt::format("{:g}", value);
}

// The domain of the values on one axis (data and guides), padded, as a scale.
Scale MakeScale(const ChartAxis& axis, const std::vector<double>& values, double from_px,
                double to_px) {
  Scale scale;
  scale.from_px = from_px;
  scale.to_px = to_px;
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  double positive_low = low;
  for (double value : values) {
    if (!std::isfinite(value)) continue;
    low = std::min(low, value);
    high = std::max(high, value);
    if (value > 0) positive_low = std::min(positive_low, value);
  }
  if (!std::isfinite(low)) {
    low = 0;
    high = 1;
  }
  scale.log = axis.log || (axis.auto_log && positive_low > 0 && low > 0 && high / low > 20);
  if (scale.log) {
    low = std::isfinite(positive_low) ? positive_low : 1;
    high = std::max(high, low);
    scale.min = axis.min.value_or(low / 1.3);
    scale.max = axis.max.value_or(high * 1.3);
  } else {
    const double span = high > low ? high - low : std::max(std::fabs(high) * 0.1, 1e-3);
    scale.min = axis.min.value_or(low - span * 0.06);
    scale.max = axis.max.value_or(high + span * 0.06);
  }
  if (!(scale.max > scale.min)) scale.max = scale.min + 1;
  return scale;
}

std::string AxisLines(const Scale& x, const Scale& y, const ChartAxis& x_axis,
                      const ChartAxis& y_axis, int height) {
  std::string svg;
  const std::vector<double> x_ticks = x.log ? LogTicks(x.min, x.max) : NiceTicks(x.min, x.max, 7);
  const std::vector<double> y_ticks = y.log ? LogTicks(y.min, y.max) : NiceTicks(y.min, y.max, 6);
  const double bottom = y.from_px;
  const double top = y.to_px;
  for (double tick : x_ticks) {
    const double px = x.Map(tick);
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" font-size=\"11\" {4}>{5}</text>\n",
        Num(px), Num(top), Num(bottom), Num(bottom + 16), kFont, TickText(tick, x_axis.percent));
  }
  for (double tick : y_ticks) {
    const double py = y.Map(tick);
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\" font-size=\"11\" {5}>{6}</text>\n",
        Num(x.from_px), Num(py), Num(x.to_px), Num(x.from_px - 6), Num(py + 4), kFont,
        TickText(tick, y_axis.percent));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>\n",
      Num(x.from_px), Num(top), Num(x.to_px - x.from_px), Num(bottom - top));
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" {}>{}{}</text>\n",
      Num((x.from_px + x.to_px) / 2), height - 10, kFont, XmlEscape(x_axis.label),
      x.log ? " (log scale)" : "");
  svg += fmt::format(
      "<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" "
      "{}>{}{}</text>\n",
      Num((top + bottom) / 2), kFont, XmlEscape(y_axis.label), y.log ? " (log scale)" : "");
  return svg;
}

std::string Legend(const std::vector<std::pair<std::string, std::string>>& items, int width,
                   double y) {
  std::string svg;
  double x = kMarginLeft;
  for (const auto& [name, color] : items) {
    const double item_width = 26 + 6.8 * static_cast<double>(name.size());
    if (x + item_width > width - kMarginRight && x > kMarginLeft) {
      x = kMarginLeft;
      y += 16;
    }
    svg += fmt::format(
        "<g class=\"legend-item\"><circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" {}>{}</text></g>\n",
        Num(x + 5), Num(y), color, Num(x + 14), Num(y + 4), kFont, XmlEscape(name));
    x += item_width;
  }
  return svg;
}

std::string StarPath(double cx, double cy, double radius) {
  std::string path = "M";
  for (int i = 0; i < 10; ++i) {
    const double r = i % 2 == 0 ? radius : radius * 0.45;
    const double angle = -M_PI / 2 + i * M_PI / 5;
    path += fmt::format("{}{},{}", i == 0 ? "" : " L", Num(cx + r * std::cos(angle)),
                        Num(cy + r * std::sin(angle)));
  }
  return path + " Z";
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<double> NiceTicks(double min, double max, int target) {
  std::vector<double> ticks;
  if (!(max > min) || !std::isfinite(min) || !std::isfinite(max) || target < 1) return ticks;
  const double raw = (max - min) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= raw) break;
  }
  for (double tick = std::ceil(min / step) * step; tick <= max + step * 1e-9; tick += step) {
    // Snap away floating error (0.30000000000000004 → 0.3).
    ticks.push_back(std::round(tick / step) * step);
  }
  return ticks;
}

std::vector<double> LogTicks(double min, double max) {
  std::vector<double> ticks;
  if (!(min > 0) || !(max > min)) return ticks;
  const int first = static_cast<int>(std::floor(std::log10(min)));
  const int last = static_cast<int>(std::ceil(std::log10(max)));
  const bool fine = max / min <= 100;
  for (int exponent = first; exponent <= last; ++exponent) {
    const double decade = std::pow(10.0, exponent);
    for (double factor : {1.0, 2.0, 5.0}) {
      if (!fine && factor != 1.0) continue;
      const double tick = factor * decade;
      if (tick >= min * (1 - 1e-9) && tick <= max * (1 + 1e-9)) ticks.push_back(tick);
    }
  }
  return ticks;
}

std::string RenderScatterChart(const ScatterChart& chart) {
  std::vector<double> xs;
  std::vector<double> ys;
  for (const ChartSeries& series : chart.series) {
    for (const ChartPoint& point : series.points) {
      if (!std::isfinite(point.x) || !std::isfinite(point.y)) continue;
      xs.push_back(point.x);
      ys.push_back(point.y);
    }
  }
  for (const ChartGuide& guide : chart.guides) (guide.vertical ? xs : ys).push_back(guide.value);
  const Scale x = MakeScale(chart.x, xs, kMarginLeft, chart.width - kMarginRight);
  const Scale y = MakeScale(chart.y, ys, chart.height - kMarginBottom, kMarginTop);

  std::string svg = fmt::format(
      "<svg class=\"chart\" id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n"
      "<text x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"600\" {}>{}</text>\n",
      XmlEscape(chart.id), chart.width, chart.height, chart.width, chart.height,
      XmlEscape(chart.title), kMarginLeft, kFont, XmlEscape(chart.title));
  std::vector<std::pair<std::string, std::string>> legend;
  for (const ChartSeries& series : chart.series) {
    const bool listed = std::any_of(legend.begin(), legend.end(),
                                    [&](const auto& item) { return item.first == series.name; });
    if (series.legend && !listed && !series.name.empty()) {
      legend.emplace_back(series.name, series.color);
    }
  }
  svg += Legend(legend, chart.width, 38);
  svg += AxisLines(x, y, chart.x, chart.y, chart.height);
  svg += "<g>\n";
  for (const ChartGuide& guide : chart.guides) {
    const bool visible = guide.vertical ? x.Accepts(guide.value) : y.Accepts(guide.value);
    if (!visible) continue;
    if (guide.vertical) {
      const double px = x.Map(guide.value);
      svg += fmt::format(
          "<line class=\"guide\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#c0392b\" "
          "stroke-dasharray=\"6 4\"/><text x=\"{3}\" y=\"{4}\" font-size=\"11\" fill=\"#c0392b\" "
          "{5}>{6}</text>\n",
          Num(px), Num(y.to_px), Num(y.from_px), Num(px + 4), Num(y.to_px + 12), kFont,
          XmlEscape(guide.label));
    } else {
      const double py = y.Map(guide.value);
      svg += fmt::format(
          "<line class=\"guide\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#c0392b\" "
          "stroke-dasharray=\"6 4\"/><text x=\"{3}\" y=\"{4}\" font-size=\"11\" fill=\"#c0392b\" "
          "text-anchor=\"end\" {5}>{6}</text>\n",
          Num(x.from_px), Num(py), Num(x.to_px), Num(x.to_px - 4), Num(py - 4), kFont,
          XmlEscape(guide.label));
    }
  }
  for (const ChartSeries& series : chart.series) {
    if (!series.line) continue;
    std::string points;
    for (const ChartPoint& point : series.points) {
      if (!x.Accepts(point.x) || !y.Accepts(point.y)) continue;
      points += fmt::format("{}{},{}", points.empty() ? "" : " ", Num(x.Map(point.x)),
                            Num(y.Map(point.y)));
    }
    if (points.empty()) continue;
    svg += fmt::format(
        "<polyline class=\"series-line\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"1.6\" stroke-opacity=\"0.8\"{}/>\n",
        points, series.color, series.dashed ? " stroke-dasharray=\"5 4\"" : "");
  }
  std::string stars;
  for (const ChartSeries& series : chart.series) {
    if (!series.markers) continue;
    for (const ChartPoint& point : series.points) {
      if (!x.Accepts(point.x) || !y.Accepts(point.y)) continue;
      const double px = x.Map(point.x);
      const double py = y.Map(point.y);
      const std::string id = point.id.empty() ? "" : fmt::format(" data-id=\"{}\"", point.id);
      const std::string title = fmt::format("<title>{}</title>", XmlEscape(point.title));
      if (point.star) {
        stars += fmt::format(
            "<path class=\"pt star\"{} d=\"{}\" fill=\"#f5c518\" stroke=\"#111\" "
            "stroke-width=\"1.5\">{}</path><text x=\"{}\" y=\"{}\" font-size=\"11\" "
            "font-weight=\"600\" {}>recommended</text>\n",
            id, StarPath(px, py, 11), title, Num(px + 12), Num(py - 8), kFont);
        continue;
      }
      svg += fmt::format(
          "<circle class=\"pt{}\"{} cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" fill-opacity=\"{}\" "
          "stroke=\"{}\" stroke-width=\"{}\">{}</circle>\n",
          point.highlight ? " frontier" : "", id, Num(px), Num(py), point.highlight ? 6 : 4.5,
          series.color, point.highlight ? "0.95" : "0.55", point.highlight ? "#111" : "none",
          point.highlight ? 1.6 : 0, title);
    }
  }
  svg += stars;
  svg += "</g>\n</svg>\n";
  return svg;
}

std::string RenderStackedBarChart(const StackedBarChart& chart) {
  constexpr int kLabelWidth = 340;
  constexpr int kBarHeight = 14;
  constexpr int kBarGap = 5;
  const int top = 62;
  const int height = top + static_cast<int>(chart.bars.size()) * (kBarHeight + kBarGap) + 48;
  double max_total = 0;
  for (const StackedBar& bar : chart.bars) {
    double total = 0;
    for (double value : bar.values) total += std::max(0.0, value);
    max_total = std::max(max_total, total);
  }
  if (!(max_total > 0)) max_total = 1;
  const double left = kLabelWidth;
  const double right = chart.width - kMarginRight;
  std::vector<double> ticks = NiceTicks(0, max_total, 6);
  const double axis_max = !ticks.empty() && ticks.back() >= max_total ? ticks.back() : max_total;
  auto map = [&](double value) { return left + value / axis_max * (right - left); };

  std::string svg = fmt::format(
      "<svg class=\"chart\" id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n"
      "<text x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"600\" {}>{}</text>\n",
      XmlEscape(chart.id), chart.width, height, chart.width, height, XmlEscape(chart.title),
      kMarginLeft, kFont, XmlEscape(chart.title));
  std::vector<std::pair<std::string, std::string>> legend;
  for (const BarSegmentKind& kind : chart.kinds) legend.emplace_back(kind.name, kind.color);
  svg += Legend(legend, chart.width, 40);
  const double bottom = top + static_cast<double>(chart.bars.size()) * (kBarHeight + kBarGap);
  for (double tick : ticks) {
    if (tick > axis_max * (1 + 1e-9)) continue;
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" font-size=\"11\" {4}>{5}</text>\n",
        Num(map(tick)), top - 4, Num(bottom), Num(bottom + 14), kFont, TickText(tick, false));
  }
  for (size_t b = 0; b < chart.bars.size(); ++b) {
    const StackedBar& bar = chart.bars[b];
    const double y = top + static_cast<double>(b) * (kBarHeight + kBarGap);
    svg +=
        fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\" {}>{}</text>\n",
                    Num(left - 6), Num(y + kBarHeight - 3), kFont, XmlEscape(bar.label));
    double start = 0;
    for (size_t k = 0; k < bar.values.size() && k < chart.kinds.size(); ++k) {
      const double value = std::max(0.0, bar.values[k]);
      if (value <= 0) continue;
      svg += fmt::format(
          "<rect class=\"seg\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
          "<title>{}: {} {:.3f}</title></rect>\n",
          Num(map(start)), Num(y), Num(map(start + value) - map(start)), kBarHeight,
          chart.kinds[k].color, XmlEscape(bar.label), XmlEscape(chart.kinds[k].name), value);
      start += value;
    }
  }
  svg +=
      fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" {}>{}</text>\n",
                  Num((left + right) / 2), Num(bottom + 34), kFont, XmlEscape(chart.value_label));
  svg += "</svg>\n";
  return svg;
}

}  // namespace brigade::analyze
