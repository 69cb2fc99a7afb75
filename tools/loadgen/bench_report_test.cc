#include "tools/loadgen/bench_report.h"

#include <algorithm>
#include <string>

#include "gtest/gtest.h"
#include "simdjson.h"

namespace brigade::loadgen {
namespace {

BenchReport SampleReport() {
  BenchReport report;
  report.model.name = "identity";
  report.model.platform = "brigade";
  report.protocol = client::ClientProtocol::kHttp;
  report.http_binary = true;
  report.samples = 1;

  LevelResult closed;
  closed.mode = LoadMode::kClosedLoop;
  closed.workers = 16;
  closed.ok = 100;
  closed.failed = 2;
  closed.errors["UNAVAILABLE (HTTP 503)"] = {.count = 2, .example = "queue \"full\""};
  closed.elapsed_s = 0.5;
  closed.throughput_per_s = 200;
  for (int i = 1; i <= 100; ++i) closed.latency.Record(i * 1000);  // 1..100 µs
  closed.service = closed.latency;
  ServerBreakdown server;
  server.requests = 100;
  server.queue_ns = 2000;
  server.compute_input_ns = 500;
  server.compute_infer_ns = 9000;
  server.compute_output_ns = 500;
  server.request_ns = 15000;
  server.executions = 50;
  server.mean_batch_size = 2;
  server.cache_hits = 60;
  server.cache_misses = 40;
  closed.server = server;
  closed.client_cpu_us_per_request = 12.5;
  report.levels.push_back(closed);

  LevelResult open;
  open.mode = LoadMode::kPoisson;
  open.workers = 8;
  open.target_rate = 500;
  open.ok = 10;
  open.unsent = 3;
  open.latency.Record(5000);
  open.server_note = "statistics unavailable: 404";
  report.levels.push_back(open);
  return report;
}

TEST(BenchReportTest, JsonCarriesPercentilesBreakdownAndOverhead) {
  const std::string json = FormatJson(SampleReport());
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  EXPECT_EQ(std::string_view(root["protocol"].get_string().value()), "http-binary");
  simdjson::dom::element closed = root["levels"].at(0);
  EXPECT_EQ(int64_t(closed["workers"]), 16);
  // Percentiles are histogram bucket middles: within 0.4% of the recorded value.
  EXPECT_NEAR(double(closed["latency_us"]["p50"]), 50.0, 0.2);
  EXPECT_DOUBLE_EQ(double(closed["server"]["compute_us"]), 10.0);
  // overhead p50 = end-to-end p50 (50 µs) − mean compute (10 µs)
  EXPECT_DOUBLE_EQ(double(closed["overhead_us"]["p50"]),
                   double(closed["latency_us"]["p50"]) - 10.0);
  EXPECT_NEAR(double(closed["overhead_us"]["p50"]), 40.0, 0.2);
  EXPECT_NEAR(double(closed["overhead_us"]["p99"]), 89.0, 0.4);
  EXPECT_DOUBLE_EQ(double(closed["client_max_requests_per_s_per_core"]), 80000.0);
  EXPECT_EQ(int64_t(closed["errors"]["UNAVAILABLE (HTTP 503)"]["count"]), 2);
  simdjson::dom::element open = root["levels"].at(1);
  EXPECT_TRUE(open["server"].is_null());
  EXPECT_TRUE(open["overhead_us"]["p50"].is_null());
  EXPECT_EQ(int64_t(open["unsent"]), 3);
  EXPECT_EQ(int64_t(closed["server"]["cache_hits"]), 60);
  EXPECT_DOUBLE_EQ(double(closed["server"]["cache_hit_rate"]), 0.6);
  EXPECT_EQ(std::string_view(root["sample_order"].get_string().value()), "cycle");
}

TEST(BenchReportTest, ZipfOrderIsNamedInEveryFormat) {
  BenchReport report = SampleReport();
  report.sample_order = SampleOrder::kZipf;
  report.zipf_exponent = 1.0;
  EXPECT_NE(FormatTable(report).find("zipf s=1\n"), std::string::npos) << FormatTable(report);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string json = FormatJson(report);
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  EXPECT_EQ(std::string_view(root["sample_order"].get_string().value()), "zipf");
  EXPECT_DOUBLE_EQ(double(root["zipf_exponent"]), 1.0);
}

TEST(BenchReportTest, CsvRowsHaveAsManyColumnsAsTheHeader) {
  const std::string csv = FormatCsv(SampleReport());
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < csv.size()) {
    const size_t end = csv.find('\n', start);
    lines.push_back(csv.substr(start, end - start));
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), 3u);
  const auto columns = std::count(lines[0].begin(), lines[0].end(), ',');
  EXPECT_EQ(std::count(lines[1].begin(), lines[1].end(), ','), columns);
  EXPECT_EQ(std::count(lines[2].begin(), lines[2].end(), ','), columns);
  EXPECT_TRUE(lines[1].starts_with("identity,http-binary,1,closed,16,")) << lines[1];
  EXPECT_TRUE(lines[0].ends_with(",server_cache_hits,server_cache_misses,server_cache_hit_rate"));
  EXPECT_TRUE(lines[1].ends_with(",60,40,0.6000")) << lines[1];
}

TEST(BenchReportTest, TableNamesLevelsErrorsAndMissingBreakdowns) {
  const std::string table = FormatTable(SampleReport());
  EXPECT_NE(table.find("c=16"), std::string::npos) << table;
  EXPECT_NE(table.find("poisson@500/s"), std::string::npos) << table;
  EXPECT_NE(table.find("2 × UNAVAILABLE (HTTP 503)"), std::string::npos) << table;
  EXPECT_NE(table.find("no server breakdown: statistics unavailable: 404"), std::string::npos);
  EXPECT_NE(table.find("3 due requests never sent"), std::string::npos);
  EXPECT_NE(table.find("c=16: response cache: hit rate 60.0% (60 hits, 40 misses)"),
            std::string::npos)
      << table;
  // A level without statistics says nothing about the cache.
  EXPECT_EQ(table.find("poisson@500/s: response cache"), std::string::npos);
}

}  // namespace
}  // namespace brigade::loadgen
