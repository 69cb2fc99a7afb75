#include <string>

#include "gtest/gtest.h"
#include "protocol/http/json_dom_reader.h"
#include "protocol/http/metadata_json.h"
#include "protocol/http/repository_json.h"
#include "protocol/http/statistics_json.h"
#include "protocol/http/test_padded_json.h"
#include "simdjson.h"

namespace brigade::protocol::http {
namespace {

TEST(HttpAdminCodecTest, DecodesServerMetadata) {
  simdjson::dom::parser parser;
  const PaddedJson body(
      R"({"name":"triton","version":"2.40.0","extensions":["statistics","binary_tensor_data"]})");
  absl::StatusOr<protocol::ServerMetadata> metadata = DecodeServerMetadata(parser, body.json());
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  EXPECT_EQ(metadata->name, "triton");
  EXPECT_EQ(metadata->version, "2.40.0");
  EXPECT_EQ(metadata->extensions, (std::vector<std::string>{"statistics", "binary_tensor_data"}));
}

TEST(HttpAdminCodecTest, DecodesModelMetadataKeepingUnknownDatatypesAsText) {
  simdjson::dom::parser parser;
  const PaddedJson body(R"({"name":"m","versions":["1","2"],"platform":"pytorch_libtorch",)"
                        R"("inputs":[{"name":"image","datatype":"FP32","shape":[-1,1,28,28]}],)"
                        R"("outputs":[{"name":"x","datatype":"FP8","shape":[-1,10]}]})");
  absl::StatusOr<protocol::ModelMetadata> metadata = DecodeModelMetadata(parser, body.json());
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  EXPECT_EQ(metadata->versions, (std::vector<std::string>{"1", "2"}));
  ASSERT_EQ(metadata->inputs.size(), 1u);
  EXPECT_EQ(metadata->inputs[0].dtype, DataType::kFp32);
  EXPECT_EQ(metadata->inputs[0].shape, (Shape{-1, 1, 28, 28}));
  EXPECT_EQ(metadata->outputs[0].dtype, DataType::kInvalid);
  EXPECT_EQ(metadata->outputs[0].datatype, "FP8");
}

TEST(HttpAdminCodecTest, DecodesTritonStatistics) {
  simdjson::dom::parser parser;
  const PaddedJson body(
      R"({"model_stats":[{"name":"m","version":"1","last_inference":1700000000000,)"
      R"("inference_count":12,"execution_count":4,"inference_stats":{)"
      R"("success":{"count":10,"ns":5000},"fail":{"count":2,"ns":100},)"
      R"("queue":{"count":10,"ns":700},"compute_input":{"count":10,"ns":10},)"
      R"("compute_infer":{"count":10,"ns":3000},"compute_output":{"count":10,"ns":20},)"
      R"("cache_hit":{"count":0,"ns":0},"cache_miss":{"count":0,"ns":0}},)"
      R"("batch_stats":[{"batch_size":3,"compute_input":{"count":4,"ns":8},)"
      R"("compute_infer":{"count":4,"ns":2000},"compute_output":{"count":4,"ns":16}}],)"
      R"("memory_usage":[],"response_stats":{}}]})");
  absl::StatusOr<std::vector<protocol::ModelStatistics>> stats =
      DecodeModelStatistics(parser, body.json());
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->size(), 1u);
  const protocol::ModelStatistics& model = (*stats)[0];
  EXPECT_EQ(model.name, "m");
  EXPECT_EQ(model.last_inference_ms, 1700000000000u);
  EXPECT_EQ(model.inference_count, 12u);
  EXPECT_EQ(model.inference_stats.success.count, 10u);
  EXPECT_EQ(model.inference_stats.compute_infer.ns, 3000u);
  EXPECT_EQ(model.inference_stats.fail.count, 2u);
  ASSERT_EQ(model.batch_stats.size(), 1u);
  EXPECT_EQ(model.batch_stats[0].batch_size, 3u);
  EXPECT_EQ(model.batch_stats[0].compute_infer.ns, 2000u);
}

TEST(HttpAdminCodecTest, DecodesTheRepositoryIndex) {
  simdjson::dom::parser parser;
  const PaddedJson body(
      R"([{"name":"a","version":"1","state":"READY"},{"name":"b","state":"UNAVAILABLE",)"
      R"("reason":"unloaded"}])");
  absl::StatusOr<std::vector<protocol::RepositoryIndexEntry>> index =
      DecodeRepositoryIndex(parser, body.json());
  ASSERT_TRUE(index.ok()) << index.status();
  ASSERT_EQ(index->size(), 2u);
  EXPECT_EQ((*index)[0].version, "1");
  EXPECT_EQ((*index)[1].state, "UNAVAILABLE");
  EXPECT_EQ((*index)[1].reason, "unloaded");
}

TEST(HttpAdminCodecTest, MalformedAnswersNameTheResponseAndField) {
  simdjson::dom::parser parser;
  const PaddedJson no_name(R"({"inputs":[]})");
  absl::Status status = DecodeModelMetadata(parser, no_name.json()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_NE(status.message().find("model metadata"), std::string::npos);
  EXPECT_NE(status.message().find("'name'"), std::string::npos);
  const PaddedJson no_stats(R"({"models":[]})");
  status = DecodeModelStatistics(parser, no_stats.json()).status();
  EXPECT_NE(status.message().find("model_stats"), std::string::npos);
}

TEST(HttpAdminCodecTest, ErrorMessageComesFromTheErrorFieldOrTheBody) {
  simdjson::dom::parser parser;
  const PaddedJson json_error(R"({"error":"unknown model 'x'"})");
  EXPECT_EQ(ErrorMessageFromBody(parser, json_error.json(), "HTTP 404"), "unknown model 'x'");
  const PaddedJson text_error("upstream timed out\n");
  EXPECT_EQ(ErrorMessageFromBody(parser, text_error.json(), "HTTP 504"), "upstream timed out");
  const PaddedJson empty("");
  EXPECT_EQ(ErrorMessageFromBody(parser, empty.json(), "HTTP 503"), "HTTP 503");
}

TEST(HttpAdminCodecTest, EncodesRepositoryRequests) {
  EXPECT_EQ(EncodeRepositoryIndexRequest(true), R"({"ready":true})");
  EXPECT_EQ(EncodeLoadRequest(""), "{}");
  EXPECT_EQ(EncodeLoadRequest(R"({"max_batch_size":4})"),
            R"({"parameters":{"config":"{\"max_batch_size\":4}"}})");
}

}  // namespace
}  // namespace brigade::protocol::http
