#include "protocol/http/infer_response_json.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/http/json_tensor_data.h"

namespace brigade::protocol::http {
namespace {

using ::testing::HasSubstr;

template <typename T>
Tensor Values(Shape shape, std::initializer_list<T> values) {
  return *Tensor::FromValues<T>(std::move(shape),
                                std::span<const T>(values.begin(), values.size()));
}

InferResponse Response(std::vector<InferOutput> outputs) {
  InferResponse response;
  response.model_name = "m";
  response.model_version = "3";
  response.outputs = std::move(outputs);
  return response;
}

OutputEncoding Encoding(bool all_binary, std::vector<std::pair<std::string, bool>> named) {
  InferRequest request;
  request.all_outputs_binary = all_binary;
  for (auto& [name, binary] : named) {
    RequestedOutput output;
    output.name = name;
    output.binary = binary;
    request.outputs.push_back(std::move(output));
  }
  return OutputEncoding::FromRequest(request);
}

TEST(EncodeInferResponseTest, WritesJsonOutputsWithIdAndParameters) {
  InferResponse response = Response(
      {{"OUT", Values<float>({2}, {0.5f, -1.0f}), {}}, {"FLAGS", Values<bool>({1}, {true}), {}}});
  response.id = "req-9";
  response.parameters.Set("cached", true);
  response.outputs[0].parameters.Set("classification", int64_t{2});
  auto encoded = EncodeInferResponse(response, OutputEncoding());
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  EXPECT_FALSE(encoded->binary);
  EXPECT_TRUE(encoded->binary_parts.empty());
  EXPECT_EQ(encoded->json,
            R"({"model_name":"m","model_version":"3","id":"req-9","parameters":{"cached":true},)"
            R"("outputs":[{"name":"OUT","datatype":"FP32","shape":[2],)"
            R"("parameters":{"classification":2},"data":[0.5,-1]},)"
            R"({"name":"FLAGS","datatype":"BOOL","shape":[1],"data":[true]}]})");
}

TEST(EncodeInferResponseTest, OmitsEmptyId) {
  auto encoded = EncodeInferResponse(Response({}), OutputEncoding());
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(encoded->json, R"({"model_name":"m","model_version":"3","outputs":[]})");
}

TEST(EncodeInferResponseTest, WritesEveryDatatypeFlat) {
  const uint16_t half_one_and_a_half = 0x3E00;  // 1.5
  const uint16_t bf16_minus_two = 0xC000;       // -2
  InferResponse response = Response({
      {"u8", Values<uint8_t>({2, 1}, {0, 255}), {}},
      {"i64", Values<int64_t>({1}, {-9}), {}},
      {"u64", Values<uint64_t>({1}, {18446744073709551615ull}), {}},
      {"f64", Values<double>({1}, {0.1}), {}},
      {"s", *Tensor::FromStrings({2}, std::vector<std::string>{"a\"", "\xC3\xA9"}), {}},
  });
  Tensor half = *Tensor::Allocate(DataType::kFp16, {1});
  std::memcpy(half.mutable_data(), &half_one_and_a_half, 2);
  Tensor bf16 = *Tensor::Allocate(DataType::kBf16, {1});
  std::memcpy(bf16.mutable_data(), &bf16_minus_two, 2);
  response.outputs.push_back({"h", half, {}});
  response.outputs.push_back({"b", bf16, {}});
  auto encoded = EncodeInferResponse(response, OutputEncoding());
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  EXPECT_THAT(encoded->json, HasSubstr(R"("shape":[2,1],"data":[0,255])"));
  EXPECT_THAT(encoded->json, HasSubstr(R"("data":[-9])"));
  EXPECT_THAT(encoded->json, HasSubstr(R"("data":[18446744073709551615])"));
  EXPECT_THAT(encoded->json, HasSubstr(R"("data":[0.1])"));
  EXPECT_THAT(encoded->json,
              HasSubstr("\"datatype\":\"BYTES\",\"shape\":[2],\"data\":[\"a\\\"\",\"\xC3\xA9\"]"));
  EXPECT_THAT(encoded->json, HasSubstr(R"("datatype":"FP16","shape":[1],"data":[1.5])"));
  EXPECT_THAT(encoded->json, HasSubstr(R"("datatype":"BF16","shape":[1],"data":[-2])"));
}

TEST(EncodeInferResponseTest, WritesRequestedOutputsAsBinaryInOrder) {
  InferResponse response = Response({{"A", Values<int32_t>({2}, {1, 2}), {}},
                                     {"B", Values<float>({1}, {3.0f}), {}},
                                     {"C", Values<uint8_t>({3}, {7, 8, 9}), {}}});
  auto encoded = EncodeInferResponse(response, Encoding(false, {{"A", true}, {"C", true}}));
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  EXPECT_TRUE(encoded->binary);
  EXPECT_THAT(
      encoded->json,
      HasSubstr(
          R"({"name":"A","datatype":"INT32","shape":[2],"parameters":{"binary_data_size":8}})"));
  EXPECT_THAT(encoded->json, HasSubstr(R"({"name":"B","datatype":"FP32","shape":[1],"data":[3]})"));
  EXPECT_THAT(
      encoded->json,
      HasSubstr(
          R"({"name":"C","datatype":"UINT8","shape":[3],"parameters":{"binary_data_size":3}})"));
  ASSERT_EQ(encoded->binary_parts.size(), 2u);
  // The parts are the tensors' own bytes, not copies.
  EXPECT_EQ(encoded->binary_parts[0].data(), response.outputs[0].tensor.data());
  EXPECT_EQ(encoded->binary_parts[0].size(), 8u);
  EXPECT_EQ(encoded->binary_parts[1].data(), response.outputs[2].tensor.data());
}

TEST(EncodeInferResponseTest, BinaryDataOutputAppliesToOutputsNotNamedOtherwise) {
  InferResponse response =
      Response({{"A", Values<int8_t>({1}, {1}), {}}, {"B", Values<int8_t>({1}, {2}), {}}});
  auto encoded = EncodeInferResponse(response, Encoding(true, {{"B", false}}));
  ASSERT_TRUE(encoded.ok());
  EXPECT_THAT(
      encoded->json,
      HasSubstr(
          R"("name":"A","datatype":"INT8","shape":[1],"parameters":{"binary_data_size":1}})"));
  EXPECT_THAT(encoded->json, HasSubstr(R"("name":"B","datatype":"INT8","shape":[1],"data":[2])"));
  EXPECT_EQ(encoded->binary_parts.size(), 1u);
}

TEST(EncodeInferResponseTest, NonUtf8BytesCannotBeJson) {
  InferResponse response =
      Response({{"S", *Tensor::FromStrings({1}, std::vector<std::string>{"\xFF\xFE"}), {}}});
  auto encoded = EncodeInferResponse(response, OutputEncoding());
  ASSERT_FALSE(encoded.ok());
  EXPECT_EQ(encoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(encoded.status().message()), HasSubstr("output 'S'"));
  EXPECT_THAT(std::string(encoded.status().message()), HasSubstr("binary_data"));
  // ... but travel fine as binary.
  EXPECT_TRUE(EncodeInferResponse(response, Encoding(true, {})).ok());
}

TEST(HalfPrecisionTest, ConvertsToFloatExactly) {
  EXPECT_EQ(HalfToFloat(0x0000), 0.0f);
  EXPECT_EQ(HalfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xC000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), 5.9604644775390625e-8f);  // smallest subnormal
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7C00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7E00)));
  EXPECT_EQ(Bfloat16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(Bfloat16ToFloat(0xC2F7), -123.5f);
}

}  // namespace
}  // namespace brigade::protocol::http
