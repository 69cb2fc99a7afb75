#include "telemetry/metrics_registry.h"

#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

using ::testing::HasSubstr;

TEST(MetricsRegistryTest, EnforcesPrometheusNaming) {
  MetricsRegistry registry;
  EXPECT_EQ(registry.AddCounter("requests", "h", {}).status().code(),
            absl::StatusCode::kInvalidArgument);  // counters end in _total
  EXPECT_EQ(registry.AddGauge("bad-name", "h", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddGauge("g", "h", {"__reserved"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddGauge("g", "h", {"a", "a"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddHistogram("h_seconds", "h", {"le"}, HistogramBuckets::LatencyNs())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(registry.AddGauge("g", "h", {"a"}).ok());
  EXPECT_EQ(registry.AddCounter("g", "h", {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddGauge("g", "h", {}).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST(MetricsRegistryTest, WrongNumberOfLabelValuesIsRejectedNamingTheMetric) {
  MetricsRegistry registry;
  CounterFamily* family = *registry.AddCounter("x_total", "h", {"model", "version"});
  const absl::StatusOr<Counter*> counter = family->WithLabels({"only-one"});
  ASSERT_FALSE(counter.ok());
  EXPECT_THAT(std::string(counter.status().message()), HasSubstr("x_total"));
}

TEST(MetricsRegistryTest, SameLabelsResolveToTheSameCell) {
  MetricsRegistry registry;
  CounterFamily* family = *registry.AddCounter("x_total", "h", {"model"});
  Counter* a = *family->WithLabels({"m"});
  Counter* b = *family->WithLabels({"m"});
  Counter* c = *family->WithLabels({"n"});
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(MetricsRegistryTest, TextListsFamiliesInRegistrationOrderAndSeriesInLabelOrder) {
  MetricsRegistry registry;
  GaugeFamily* gauges = *registry.AddGauge("q_length", "Queue.", {"model"});
  CounterFamily* counters = *registry.AddCounter("r_total", "Requests.", {"model"});
  (*gauges->WithLabels({"b"}))->Set(2);
  (*gauges->WithLabels({"a"}))->Set(-1);
  (*counters->WithLabels({"a"}))->Add(5);
  EXPECT_EQ(registry.Text(),
            "# HELP q_length Queue.\n"
            "# TYPE q_length gauge\n"
            "q_length{model=\"a\"} -1\n"
            "q_length{model=\"b\"} 2\n"
            "# HELP r_total Requests.\n"
            "# TYPE r_total counter\n"
            "r_total{model=\"a\"} 5\n");
}

TEST(MetricsRegistryTest, ConcurrentAddsFromManyThreadsSumExactly) {
  MetricsRegistry registry;
  CounterFamily* family = *registry.AddCounter("x_total", "h", {"model"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      Counter* counter = *family->WithLabels({"m"});
      for (int i = 0; i < 50000; ++i) counter->Add();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ((*family->WithLabels({"m"}))->Value(), 400000u);
}

TEST(MetricsRegistryTest, HistogramFamilyWritesItsBuckets) {
  MetricsRegistry registry;
  HistogramFamily* family =
      *registry.AddHistogram("b_size", "Batch.", {}, *HistogramBuckets::Create({1, 2}));
  (*family->WithLabels(std::initializer_list<std::string_view>{}))->Observe(2);
  EXPECT_EQ(registry.Text(),
            "# HELP b_size Batch.\n"
            "# TYPE b_size histogram\n"
            "b_size_bucket{le=\"1\"} 0\n"
            "b_size_bucket{le=\"2\"} 1\n"
            "b_size_bucket{le=\"+Inf\"} 1\n"
            "b_size_sum 2\n"
            "b_size_count 1\n");
}

}  // namespace
}  // namespace brigade::telemetry
