#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "protocol/grpc/admin_messages.h"
#include "protocol/grpc/infer_messages.h"

namespace brigade::protocol::grpc {
namespace {

TEST(EncodeModelInferRequestTest, SendsInputsAsRawContentsWithParameters) {
  InferSpec request;
  request.model_name = "m";
  request.model_version = "2";
  request.id = "r";
  request.parameters.Set("timeout", int64_t{5000});
  const std::vector<int32_t> values = {7, -8};
  request.inputs.push_back(InferInput{
      .name = "A", .tensor = *Tensor::FromValues<int32_t>({1, 2}, values), .parameters = {}});
  request.outputs.push_back({.name = "OUT", .parameters = {}, .binary = true});
  inference::ModelInferRequest message;
  ASSERT_TRUE(EncodeModelInferRequest(request, &message).ok());
  EXPECT_EQ(message.model_name(), "m");
  EXPECT_EQ(message.model_version(), "2");
  EXPECT_EQ(message.id(), "r");
  EXPECT_EQ(message.parameters().at("timeout").int64_param(), 5000);
  ASSERT_EQ(message.inputs_size(), 1);
  EXPECT_EQ(message.inputs(0).datatype(), "INT32");
  EXPECT_EQ(message.inputs(0).shape_size(), 2);
  EXPECT_FALSE(message.inputs(0).has_contents());
  ASSERT_EQ(message.raw_input_contents_size(), 1);
  EXPECT_EQ(message.raw_input_contents(0),
            std::string(reinterpret_cast<const char*>(values.data()), 8));
  ASSERT_EQ(message.outputs_size(), 1);
  EXPECT_EQ(message.outputs(0).name(), "OUT");
}

TEST(EncodeModelInferRequestTest, SharedMemoryInputsHaveNoRawContentsEntry) {
  InferSpec request;
  request.model_name = "m";
  const std::vector<float> values = {1.5f};
  request.inputs.push_back(
      InferInput{.name = "A", .tensor = *Tensor::Zeros(DataType::kFp32, {4}), .parameters = {}});
  request.inputs[0].parameters.Set("shared_memory_region", std::string("r"));
  request.inputs[0].parameters.Set("shared_memory_byte_size", int64_t{16});
  request.inputs.push_back(
      InferInput{.name = "B", .tensor = *Tensor::FromValues<float>({1}, values), .parameters = {}});
  inference::ModelInferRequest message;
  ASSERT_TRUE(EncodeModelInferRequest(request, &message).ok());
  ASSERT_EQ(message.inputs_size(), 2);
  EXPECT_EQ(message.inputs(0).shape(0), 4);
  EXPECT_EQ(message.inputs(0).parameters().at("shared_memory_region").string_param(), "r");
  EXPECT_EQ(message.inputs(0).parameters().at("shared_memory_byte_size").int64_param(), 16);
  // Only B's bytes travel: raw_input_contents lists the inputs not in shared memory.
  ASSERT_EQ(message.raw_input_contents_size(), 1);
  EXPECT_EQ(message.raw_input_contents(0),
            std::string(reinterpret_cast<const char*>(values.data()), 4));
}

TEST(EncodeModelInferRequestTest, ReusingTheMessageReplacesItsContents) {
  InferSpec request;
  request.model_name = "m";
  request.inputs.push_back(
      InferInput{.name = "A", .tensor = *Tensor::Zeros(DataType::kFp32, {4}), .parameters = {}});
  inference::ModelInferRequest message;
  ASSERT_TRUE(EncodeModelInferRequest(request, &message).ok());
  ASSERT_TRUE(EncodeModelInferRequest(request, &message).ok());
  EXPECT_EQ(message.inputs_size(), 1);
  EXPECT_EQ(message.raw_input_contents_size(), 1);
}

TEST(DecodeModelInferResponseTest, RawOutputsAreViewsIntoTheMessage) {
  auto message = std::make_shared<inference::ModelInferResponse>();
  message->set_model_name("m");
  message->set_model_version("1");
  message->set_id("r");
  (*message->mutable_parameters())["p"].set_bool_param(true);
  auto* output = message->add_outputs();
  output->set_name("OUT");
  output->set_datatype("FP32");
  output->add_shape(2);
  const float values[2] = {0.25f, 4.0f};
  message->add_raw_output_contents()->assign(reinterpret_cast<const char*>(values), 8);
  InferResponse response;
  ASSERT_TRUE(DecodeModelInferResponse(message, &response).ok());
  EXPECT_EQ(response.model_name, "m");
  EXPECT_EQ(response.id, "r");
  EXPECT_EQ(response.parameters.GetBool("p"), true);
  ASSERT_EQ(response.outputs.size(), 1u);
  EXPECT_EQ(static_cast<const void*>(response.outputs[0].tensor.data()),
            static_cast<const void*>(message->raw_output_contents(0).data()));
  EXPECT_EQ(response.outputs[0].tensor.values<float>()[1], 4.0f);
  EXPECT_GT(message.use_count(), 1);
  response.outputs.clear();
  EXPECT_EQ(message.use_count(), 1);
}

TEST(DecodeModelInferResponseTest, TypedContentsAreConvertedToTheOutputsType) {
  auto message = std::make_shared<inference::ModelInferResponse>();
  auto* a = message->add_outputs();
  a->set_name("A");
  a->set_datatype("INT16");
  a->add_shape(3);
  for (int v : {1, -2, 300}) a->mutable_contents()->add_int_contents(v);
  auto* s = message->add_outputs();
  s->set_name("S");
  s->set_datatype("BYTES");
  s->add_shape(1);
  s->mutable_contents()->add_bytes_contents("label");
  InferResponse response;
  ASSERT_TRUE(DecodeModelInferResponse(message, &response).ok());
  ASSERT_EQ(response.outputs.size(), 2u);
  EXPECT_EQ(response.outputs[0].tensor.values<int16_t>()[2], 300);
  EXPECT_EQ(response.outputs[1].tensor.StringValues()->at(0), "label");
}

TEST(DecodeModelInferResponseTest, ReportsMismatchesNamingTheOutput) {
  auto message = std::make_shared<inference::ModelInferResponse>();
  auto* a = message->add_outputs();
  a->set_name("A");
  a->set_datatype("FP32");
  a->add_shape(3);
  message->add_raw_output_contents()->assign(8, '\0');  // 2 floats for a shape of 3
  InferResponse response;
  absl::Status status = DecodeModelInferResponse(message, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_NE(status.message().find("'A'"), std::string::npos) << status.message();

  message->add_raw_output_contents();  // 2 raw entries for 1 output
  status = DecodeModelInferResponse(message, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
}

TEST(GrpcAdminDecodeTest, ConvertsMetadataStatisticsAndIndex) {
  inference::ModelMetadataResponse metadata;
  metadata.set_name("m");
  metadata.add_versions("1");
  auto* input = metadata.add_inputs();
  input->set_name("x");
  input->set_datatype("UINT8");
  input->add_shape(-1);
  input->add_shape(4);
  const protocol::ModelMetadata converted = DecodeModelMetadata(metadata);
  EXPECT_EQ(converted.name, "m");
  ASSERT_EQ(converted.inputs.size(), 1u);
  EXPECT_EQ(converted.inputs[0].dtype, DataType::kUint8);
  EXPECT_EQ(converted.inputs[0].shape, (Shape{-1, 4}));

  inference::ModelStatisticsResponse stats;
  auto* model = stats.add_model_stats();
  model->set_name("m");
  model->mutable_inference_stats()->mutable_queue()->set_count(3);
  model->mutable_inference_stats()->mutable_queue()->set_ns(300);
  model->add_batch_stats()->set_batch_size(2);
  const std::vector<protocol::ModelStatistics> converted_stats = DecodeModelStatistics(stats);
  ASSERT_EQ(converted_stats.size(), 1u);
  EXPECT_EQ(converted_stats[0].inference_stats.queue.ns, 300u);
  EXPECT_EQ(converted_stats[0].batch_stats[0].batch_size, 2u);

  inference::RepositoryIndexResponse index;
  auto* entry = index.add_models();
  entry->set_name("m");
  entry->set_state("READY");
  EXPECT_EQ(DecodeRepositoryIndex(index)[0].state, "READY");
}

}  // namespace
}  // namespace brigade::protocol::grpc
