#include "tools/analyze/svg_chart.h"

#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::analyze {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

size_t Count(const std::string& text, std::string_view needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST(NiceTicksTest, UsesOneTwoFiveSteps) {
  EXPECT_THAT(NiceTicks(0, 10, 5), ElementsAre(0, 2, 4, 6, 8, 10));
  EXPECT_THAT(NiceTicks(0.3, 2.9, 6), ElementsAre(0.5, 1, 1.5, 2, 2.5));
  // Steps snap to the nearest 1-2-5 value at or above the raw step (0.006 → 0.01).
  EXPECT_THAT(NiceTicks(0.885, 0.921, 6),
              ElementsAre(DoubleNear(0.89, 1e-12), DoubleNear(0.9, 1e-12), DoubleNear(0.91, 1e-12),
                          DoubleNear(0.92, 1e-12)));
  EXPECT_TRUE(NiceTicks(1, 1, 5).empty());
  EXPECT_TRUE(NiceTicks(0, std::numeric_limits<double>::infinity(), 5).empty());
}

TEST(LogTicksTest, DecadesWithTwoAndFiveOnShortRanges) {
  EXPECT_THAT(LogTicks(0.8, 30), ElementsAre(1, 2, 5, 10, 20));
  EXPECT_THAT(LogTicks(0.05, 3000), ElementsAre(0.1, 1, 10, 100, 1000));
  EXPECT_TRUE(LogTicks(0, 10).empty());
}

TEST(XmlEscapeTest, EscapesMarkup) {
  EXPECT_EQ(XmlEscape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
}

TEST(RenderScatterChartTest, DrawsEveryFinitePointWithItsTitleAndId) {
  ScatterChart chart{.id = "demo", .title = "Demo <chart>"};
  chart.x.label = "p99 (ms)";
  chart.y.label = "accuracy";
  chart.y.percent = true;
  chart.series.push_back(
      {.name = "cnn",
       .color = "#1f77b4",
       .points = {{.x = 1, .y = 0.91, .title = "a", .id = "0"},
                  {.x = 2, .y = 0.92, .title = "b", .id = "1", .highlight = true},
                  {.x = std::nan(""), .y = 0.9, .title = "failed", .id = "2"}},
       .line = true});
  chart.series.push_back(
      {.name = "mlp",
       .color = "#ff7f0e",
       .points = {{.x = 0.5, .y = 0.88, .title = "c", .id = "3", .star = true}}});
  chart.guides.push_back({.vertical = true, .value = 3, .label = "SLO"});
  const std::string svg = RenderScatterChart(chart);
  EXPECT_THAT(svg, HasSubstr("<svg class=\"chart\" id=\"demo\""));
  EXPECT_THAT(svg, HasSubstr("Demo &lt;chart&gt;"));
  EXPECT_EQ(Count(svg, "class=\"pt"), 3u);
  EXPECT_THAT(svg, HasSubstr("data-id=\"1\""));
  EXPECT_THAT(svg, Not(HasSubstr("data-id=\"2\"")));
  EXPECT_EQ(Count(svg, "class=\"pt frontier\""), 1u);
  EXPECT_EQ(Count(svg, "class=\"pt star\""), 1u);
  EXPECT_EQ(Count(svg, "class=\"series-line\""), 1u);
  EXPECT_EQ(Count(svg, "class=\"guide\""), 1u);
  EXPECT_THAT(svg, HasSubstr("<title>b</title>"));
  EXPECT_EQ(Count(svg, "class=\"legend-item\""), 2u);
  EXPECT_THAT(svg, HasSubstr("%</text>"));
  EXPECT_THAT(svg, HasSubstr("</svg>"));
}

TEST(RenderScatterChartTest, SwitchesToLogScaleForWideRanges) {
  ScatterChart chart{.id = "wide"};
  chart.x = {.label = "latency", .auto_log = true};
  chart.series.push_back(
      {.name = "s", .color = "#000", .points = {{.x = 0.2, .y = 1}, {.x = 90, .y = 2}}});
  EXPECT_THAT(RenderScatterChart(chart), HasSubstr("latency (log scale)"));
  chart.series[0].points[1].x = 2;
  EXPECT_THAT(RenderScatterChart(chart), Not(HasSubstr("(log scale)")));
}

TEST(RenderStackedBarChartTest, OneSegmentPerPositiveValue) {
  StackedBarChart chart{.id = "bars", .title = "stages", .value_label = "ms"};
  chart.kinds = {{"queue", "#111"}, {"compute", "#222"}, {"other", "#333"}};
  chart.bars = {{.label = "a", .values = {0.5, 2.0, 0.1}}, {.label = "b", .values = {0, 1.0, -3}}};
  const std::string svg = RenderStackedBarChart(chart);
  EXPECT_THAT(svg, HasSubstr("id=\"bars\""));
  EXPECT_EQ(Count(svg, "class=\"seg\""), 4u);
  EXPECT_THAT(svg, HasSubstr("<title>a: compute 2.000</title>"));
  EXPECT_EQ(Count(svg, "class=\"legend-item\""), 3u);
}

}  // namespace
}  // namespace brigade::analyze
