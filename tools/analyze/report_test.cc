// The analysis outputs (JSON, HTML, text) and Decide(), over a small synthetic analysis: two
// variants, three configurations, two load levels each.

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tools/analyze/analysis_json.h"
#include "tools/analyze/analyzer.h"
#include "tools/analyze/html_report.h"
#include "tools/analyze/summary_text.h"

namespace brigade::analyze {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

size_t Occurrences(const std::string& text, std::string_view needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

PointResult Point(size_t config, int concurrency, double p99_ms, double throughput,
                  double accuracy) {
  PointResult point;
  point.config = config;
  point.concurrency = concurrency;
  point.p50_ms = p99_ms / 2;
  point.p90_ms = p99_ms * 0.8;
  point.p99_ms = p99_ms;
  point.mean_ms = p99_ms / 2;
  point.throughput_per_s = throughput;
  point.ok = static_cast<int64_t>(throughput * 2);
  point.accuracy = accuracy;
  loadgen::ServerBreakdown server;
  server.requests = static_cast<uint64_t>(point.ok);
  server.queue_ns = p99_ms * 1e5;
  server.compute_infer_ns = p99_ms * 2e5;
  server.request_ns = p99_ms * 4e5;
  server.executions = server.requests / 2;
  server.mean_batch_size = 2;
  point.server = server;
  return point;
}

Analysis Synthetic(double slo_p99_ms) {
  Analysis analysis;
  analysis.settings.eval_description = "t10k-images (100 × [28,28] UINT8)";
  analysis.settings.eval_examples = 100;
  analysis.settings.load_description = "closed loop, concurrency 1, 4";
  analysis.settings.cores = 2;
  analysis.settings.slo = {.max_p99_ms = slo_p99_ms, .max_accuracy_drop = 0.01};
  analysis.settings.command_line = "brigade analyze <a> & <b>";
  analysis.variants = {{.name = "cnn",
                        .model_dir = "models/cnn",
                        .platform = "pytorch_libtorch",
                        .base_max_batch_size = 32,
                        .accuracy = 0.92,
                        .examples = 100,
                        .correct = 92},
                       {.name = "mlp",
                        .model_dir = "models/mlp",
                        .platform = "pytorch_libtorch",
                        .base_max_batch_size = 32,
                        .accuracy = 0.88,
                        .examples = 100,
                        .correct = 88}};
  ServingConfig cnn1{
      .variant = 0, .max_batch_size = 1, .instances = 1, .threads = 1, .effective_threads = 1};
  ServingConfig cnn8 = cnn1;
  cnn8.max_batch_size = 8;
  cnn8.policy = {.kind = BatchingKind::kFixedDelay, .delay_us = 200};
  ServingConfig mlp1 = cnn1;
  mlp1.variant = 1;
  analysis.configs = {{.config = cnn1, .variant = "cnn", .config_text = "name: \"cnn\"\n"},
                      {.config = cnn8, .variant = "cnn", .config_text = "max_batch_size: 8\n"},
                      {.config = mlp1, .variant = "mlp", .config_text = "name: \"mlp\"\n"}};
  analysis.points = {Point(0, 1, 2.0, 500, 0.92),  Point(0, 4, 6.0, 700, 0.92),
                     Point(1, 1, 2.5, 450, 0.92),  Point(1, 4, 4.0, 900, 0.92),
                     Point(2, 1, 0.8, 1500, 0.88), Point(2, 4, 1.5, 2600, 0.88)};
  PointResult failed;
  failed.config = 2;
  failed.concurrency = 16;
  failed.accuracy = 0.88;
  failed.error = "no request succeeded: 5 × UNAVAILABLE";
  analysis.points.push_back(failed);
  analysis.skipped = {{.config = mlp1, .reason = "max batch 1 forms no batches"}};
  Decide(&analysis);
  return analysis;
}

TEST(DecideTest, FrontierAndRecommendationFollowTheSlo) {
  const Analysis analysis = Synthetic(5);
  // Point 2 (2.5 ms, 450/s) is dominated by point 0 (2 ms, 500/s, same accuracy); point 1 by 3.
  EXPECT_EQ(analysis.frontier, (std::vector<size_t>{0, 3, 4, 5}));
  ASSERT_EQ(analysis.recommendation.status, Recommendation::Status::kChosen);
  // The mlp is fastest but 4 points less accurate; the best cnn point under 5 ms is point 3.
  EXPECT_EQ(analysis.recommendation.chosen, 3u);
  EXPECT_EQ(analysis.recommendation.feasible, (std::vector<size_t>{0, 2, 3}));
}

TEST(DecideTest, ReferenceVariantSetsTheBaseline) {
  Analysis analysis = Synthetic(5);
  analysis.settings.reference = "mlp";
  analysis.settings.slo.baseline_accuracy = std::nan("");
  Decide(&analysis);
  EXPECT_DOUBLE_EQ(analysis.recommendation.baseline_accuracy, 0.88);
  // Nothing is below the mlp's accuracy now, so its 2600/s point wins.
  EXPECT_EQ(analysis.recommendation.chosen, 5u);
}

TEST(AnalysisJsonTest, IsStrictJsonWithEveryPointAndTheRecommendation) {
  const Analysis analysis = Synthetic(5);
  const std::string json = FormatAnalysisJson(analysis);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  EXPECT_EQ(std::string_view(root["tool"].get_string().value()), "brigade analyze");
  EXPECT_EQ(root["points"].get_array().size(), 7u);
  EXPECT_EQ(root["configs"].get_array().size(), 3u);
  EXPECT_EQ(root["variants"].get_array().size(), 2u);
  EXPECT_EQ(root["frontier"].get_array().size(), 4u);
  const simdjson::dom::element recommendation = root["recommendation"];
  EXPECT_EQ(std::string_view(recommendation["status"].get_string().value()), "chosen");
  EXPECT_EQ(recommendation["point"].get_int64().value(), 3);
  const simdjson::dom::element chosen = root["points"].at(3);
  EXPECT_TRUE(chosen["recommended"].get_bool().value());
  EXPECT_TRUE(chosen["on_frontier"].get_bool().value());
  EXPECT_DOUBLE_EQ(chosen["latency_ms"]["p99"].get_double().value(), 4.0);
  EXPECT_DOUBLE_EQ(chosen["server"]["queue_us"].get_double().value(), 400);
  // The failed point's unmeasured numbers are null, not NaN.
  const simdjson::dom::element failed = root["points"].at(6);
  EXPECT_TRUE(failed["latency_ms"]["p99"].is_null());
  EXPECT_TRUE(failed["server"].is_null());
  EXPECT_THAT(std::string(failed["error"].get_string().value()), HasSubstr("UNAVAILABLE"));
  EXPECT_DOUBLE_EQ(root["settings"]["slo"]["max_p99_ms"].get_double().value(), 5);
  EXPECT_TRUE(root["settings"]["slo"]["max_accuracy_drop"].is_double());
  EXPECT_EQ(root["skipped"].get_array().size(), 1u);
  // Not sampled in this synthetic analysis: null, not NaN.
  EXPECT_TRUE(root["settings"]["other_cores_busy"].is_null());
}

TEST(AnalysisJsonTest, NoPointMeetsTheSloListsTheNearest) {
  const Analysis analysis = Synthetic(0.5);
  ASSERT_EQ(analysis.recommendation.status, Recommendation::Status::kNoPointMeetsSlo);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string json = FormatAnalysisJson(analysis);
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS);
  const simdjson::dom::element recommendation = root["recommendation"];
  EXPECT_EQ(std::string_view(recommendation["status"].get_string().value()), "no_point_meets_slo");
  EXPECT_TRUE(recommendation["point"].is_null());
  ASSERT_EQ(recommendation["nearest"].get_array().size(), 3u);
  EXPECT_THAT(std::string(recommendation["nearest"].at(0)["why"].get_string().value()),
              HasSubstr("exceeds 0.5 ms"));
}

TEST(RecommendationTextTest, SaysWhatWasChosenOrThatNothingMeetsTheSlo) {
  EXPECT_THAT(RecommendationText(Synthetic(5)),
              HasSubstr("Recommended (p99 ≤ 5 ms, accuracy drop ≤ 1.00 pt, most throughput; 3 "
                        "of 7 points meet the SLO):\n  cnn mb=8 delay:200 i=1 t=1 @ c=4"));
  const std::string miss = RecommendationText(Synthetic(0.5));
  EXPECT_THAT(miss, HasSubstr("No point meets the SLO (p99 ≤ 0.5 ms"));
  EXPECT_THAT(miss, HasSubstr("Nearest:\n  cnn mb=1 none i=1 t=1 @ c=1"));
  EXPECT_EQ(RecommendationText(Analysis{}),
            "No point was measured successfully, so nothing can be recommended.\n");
}

TEST(MachineTextTest, WarnsWhenOtherWorkCompetedForTheCores) {
  Analysis analysis = Synthetic(5);
  EXPECT_EQ(MachineText(analysis.settings),
            "2 cores; other processes used unknown cores on average during the sweep (load "
            "average unknown when it began)");
  analysis.settings.other_cores_busy = 0.05;
  analysis.settings.load_average_start = 0.4;
  EXPECT_FALSE(MachineWasBusy(analysis.settings));
  EXPECT_THAT(FormatHtmlReport(analysis), Not(HasSubstr("id=busy-machine")));
  analysis.settings.other_cores_busy = 0.9;
  EXPECT_TRUE(MachineWasBusy(analysis.settings));
  EXPECT_THAT(MachineText(analysis.settings),
              HasSubstr("used 0.90 cores on average during the sweep (load average 0.40 when it "
                        "began). Other work competed"));
  EXPECT_THAT(FormatHtmlReport(analysis), HasSubstr("id=busy-machine"));
}

TEST(FormatPointTableTest, MarksFrontierRecommendedAndErrors) {
  const std::string table = FormatPointTable(Synthetic(5));
  EXPECT_EQ(Occurrences(table, "\n"), 8u);
  EXPECT_EQ(Occurrences(table, "recommended"), 1u);
  EXPECT_EQ(Occurrences(table, "frontier"), 4u);
  EXPECT_THAT(table, HasSubstr("error: no request succeeded"));
}

TEST(HtmlReportTest, IsSelfContainedWithItsThreeCharts) {
  const Analysis analysis = Synthetic(5);
  const std::string html = FormatHtmlReport(analysis);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(html, HasSubstr("id=\"latency-accuracy\""));
  EXPECT_THAT(html, HasSubstr("id=\"throughput-latency\""));
  EXPECT_THAT(html, HasSubstr("id=\"stage-breakdown\""));
  // Nothing is fetched: no script, stylesheet link or image source.
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  // Six valid points in each scatter chart (the failed one is left out) and one star each.
  EXPECT_EQ(Occurrences(html, "class=\"pt"), 12u);
  EXPECT_EQ(Occurrences(html, "class=\"pt star\""), 2u);
  // Stage bars for the six points with statistics.
  EXPECT_EQ(Occurrences(html, "<rect class=\"seg\""), 6u * 4);
  EXPECT_THAT(html, HasSubstr("brigade analyze &lt;a&gt; &amp; &lt;b&gt;"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"recommended\" data-id=\"3\">"));
  EXPECT_THAT(html, HasSubstr("Skipped configurations"));
}

}  // namespace
}  // namespace brigade::analyze
