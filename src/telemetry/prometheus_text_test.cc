#include "telemetry/prometheus_text.h"

#include <limits>

#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

TEST(PrometheusNamesTest, MetricAndLabelGrammar) {
  EXPECT_TRUE(IsValidMetricName("brigade_requests_total"));
  EXPECT_TRUE(IsValidMetricName("a:b_c9"));
  EXPECT_FALSE(IsValidMetricName("9abc"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_TRUE(IsValidLabelName("model"));
  EXPECT_TRUE(IsValidLabelName("_x"));
  EXPECT_FALSE(IsValidLabelName("__name__"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("1a"));
}

TEST(PrometheusValueTest, SpecialAndShortestForms) {
  EXPECT_EQ(FormatPrometheusValue(1.0), "1");
  EXPECT_EQ(FormatPrometheusValue(0.25), "0.25");
  EXPECT_EQ(FormatPrometheusValue(1e-6), "1e-06");
  EXPECT_EQ(FormatPrometheusValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatPrometheusValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatPrometheusValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(PrometheusTextWriterTest, EscapesHelpAndLabelValues) {
  std::string out;
  PrometheusTextWriter writer(&out);
  writer.Family("m_total", "line\\one\nline \"two\"", MetricType::kCounter);
  const LabelPair labels[] = {{"model", "a\"b\\c\nd"}};
  writer.Sample("m_total", labels, uint64_t{3});
  EXPECT_EQ(out,
            "# HELP m_total line\\\\one\\nline \"two\"\n"
            "# TYPE m_total counter\n"
            "m_total{model=\"a\\\"b\\\\c\\nd\"} 3\n");
}

TEST(PrometheusTextWriterTest, SampleWithoutLabelsHasNoBraces) {
  std::string out;
  PrometheusTextWriter writer(&out);
  writer.Sample("g", {}, int64_t{-2});
  EXPECT_EQ(out, "g -2\n");
}

TEST(PrometheusTextWriterTest, HistogramIsCumulativeWithInfSumAndCountInExposedUnits) {
  const HistogramBuckets buckets = *HistogramBuckets::Create({1000, 2000}, 1'000'000);
  const HistogramSnapshot snapshot{.counts = {1, 2, 3}, .sum = 9'500};
  std::string out;
  PrometheusTextWriter writer(&out);
  const LabelPair labels[] = {{"model", "m"}};
  writer.HistogramSamples("d_seconds", labels, buckets, snapshot);
  EXPECT_EQ(out,
            "d_seconds_bucket{model=\"m\",le=\"0.001\"} 1\n"
            "d_seconds_bucket{model=\"m\",le=\"0.002\"} 3\n"
            "d_seconds_bucket{model=\"m\",le=\"+Inf\"} 6\n"
            "d_seconds_sum{model=\"m\"} 0.0095\n"
            "d_seconds_count{model=\"m\"} 6\n");
}

}  // namespace
}  // namespace brigade::telemetry
