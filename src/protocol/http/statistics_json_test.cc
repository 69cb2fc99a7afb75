#include "protocol/http/statistics_json.h"

#include <vector>

#include "gtest/gtest.h"

namespace brigade::protocol::http {
namespace {

TEST(StatisticsEncoderTest, UsesTritonFieldNames) {
  // Designated initializers rather than assignments: g++ 12 at -O3 raises a false -Wrestrict on
  // assigning short literals to the snapshot's strings (GCC bug 105329).
  protocol::ModelStatistics model{.name = "m",
                                  .version = "1",
                                  .last_inference_ms = 1700000000000,
                                  .inference_count = 6,
                                  .execution_count = 2,
                                  .inference_stats = {},
                                  .batch_stats = {},
                                  .stage_latency = {}};
  model.inference_stats.success = {5, 500};
  model.inference_stats.fail = {1, 10};
  model.inference_stats.queue = {5, 50};
  model.inference_stats.compute_input = {2, 20};
  model.inference_stats.compute_infer = {2, 200};
  model.inference_stats.compute_output = {2, 30};
  model.inference_stats.cache_hit = {0, 0};
  model.inference_stats.cache_miss = {3, 9};
  protocol::BatchStatistics batch;
  batch.batch_size = 3;
  batch.compute_input = {2, 20};
  batch.compute_infer = {2, 200};
  batch.compute_output = {2, 30};
  model.batch_stats.push_back(batch);
  std::vector<protocol::ModelStatistics> models{model};
  EXPECT_EQ(
      EncodeStatistics(models),
      R"({"model_stats":[{"name":"m","version":"1","last_inference":1700000000000,)"
      R"("inference_count":6,"execution_count":2,"inference_stats":{)"
      R"("success":{"count":5,"ns":500},"fail":{"count":1,"ns":10},"queue":{"count":5,"ns":50},)"
      R"("compute_input":{"count":2,"ns":20},"compute_infer":{"count":2,"ns":200},)"
      R"("compute_output":{"count":2,"ns":30},"cache_hit":{"count":0,"ns":0},)"
      R"("cache_miss":{"count":3,"ns":9}},"response_stats":{},"batch_stats":[{"batch_size":3,)"
      R"("compute_input":{"count":2,"ns":20},"compute_infer":{"count":2,"ns":200},)"
      R"("compute_output":{"count":2,"ns":30}}],"memory_usage":[],"brigade_stage_latency":[]}]})");
}

TEST(StatisticsEncoderTest, AddsPerStagePercentilesOfStagesThatRan) {
  protocol::ModelStatistics model{.name = "m",
                                  .version = "1",
                                  .last_inference_ms = 0,
                                  .inference_count = 4,
                                  .execution_count = 4,
                                  .inference_stats = {},
                                  .batch_stats = {},
                                  .stage_latency = {}};
  model.stage_latency.push_back({"queue", 4, 1500, 2500, 4000});
  model.stage_latency.push_back({"compute", 0, 0, 0, 0});
  model.stage_latency.push_back({"total", 4, 20000, 30000, 45500});
  std::vector<protocol::ModelStatistics> models{model};
  const std::string json = EncodeStatistics(models);
  EXPECT_NE(json.find(R"("brigade_stage_latency":[)"
                      R"({"stage":"queue","count":4,"p50_us":1.5,"p90_us":2.5,"p99_us":4},)"
                      R"({"stage":"total","count":4,"p50_us":20,"p90_us":30,"p99_us":45.5}])"),
            std::string::npos)
      << json;
}

TEST(StatisticsEncoderTest, NoModelsIsAnEmptyList) {
  EXPECT_EQ(EncodeStatistics({}), R"({"model_stats":[]})");
}

}  // namespace
}  // namespace brigade::protocol::http
