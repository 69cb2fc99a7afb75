#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/http/infer_request_json.h"
#include "protocol/http/infer_response_json.h"
#include "protocol/http/json_dom_reader.h"
#include "protocol/http/test_padded_json.h"
#include "protocol/http/url_path.h"
#include "simdjson.h"

namespace brigade::protocol::http {
namespace {

InferInput FloatInput(std::string name, Shape shape, std::vector<float> values) {
  return InferInput{.name = std::move(name),
                    .tensor = *Tensor::FromValues<float>(std::move(shape), values),
                    .parameters = {}};
}

TEST(AppendModelPathTest, PercentEncodesNamesAndAddsTheVersion) {
  std::string path;
  AppendModelPath("my model/1", "3", "/infer", &path);
  EXPECT_EQ(path, "/v2/models/my%20model%2F1/versions/3/infer");
  path.clear();
  AppendModelPath("simple", "", "", &path);
  EXPECT_EQ(path, "/v2/models/simple");
}

TEST(EncodeInferRequestTest, WritesJsonTensorsInTheProtocolShape) {
  InferSpec request;
  request.model_name = "m";
  request.id = "r1";
  request.parameters.Set("priority", int64_t{1});
  request.inputs.push_back(FloatInput("INPUT0", {1, 3}, {0.5f, -1.0f, 0.1f}));
  request.outputs.push_back({.name = "OUTPUT0", .parameters = {}, .binary = false});
  std::string json;
  std::vector<std::span<const std::byte>> parts;
  ASSERT_TRUE(EncodeInferRequest(request, &json, &parts).ok());
  EXPECT_EQ(json,
            R"({"id":"r1","parameters":{"priority":1},"inputs":[{"name":"INPUT0","shape":[1,3],)"
            R"("datatype":"FP32","data":[0.5,-1,0.1]}],"outputs":[{"name":"OUTPUT0"}]})");
  EXPECT_TRUE(parts.empty());
}

TEST(EncodeInferRequestTest, BinaryInputsCarryTheirSizeAndFollowTheJsonUncopied) {
  InferSpec request;
  request.model_name = "m";
  request.inputs.push_back(FloatInput("A", {2}, {1.0f, 2.0f}));
  request.inputs.push_back(
      InferInput{.name = "B",
                 .tensor = *Tensor::FromStrings({1}, std::vector<std::string>{"xyz"}),
                 .parameters = {}});
  request.binary_inputs = true;
  request.binary_outputs = true;
  std::string json;
  std::vector<std::span<const std::byte>> parts;
  ASSERT_TRUE(EncodeInferRequest(request, &json, &parts).ok());
  EXPECT_EQ(json,
            R"({"parameters":{"binary_data_output":true},"inputs":[)"
            R"({"name":"A","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}},)"
            R"({"name":"B","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":7}}]})");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].data(), request.inputs[0].tensor.data());
  EXPECT_EQ(parts[0].size(), 8u);
  EXPECT_EQ(parts[1].size(), 7u);
}

TEST(EncodeInferRequestTest, SharedMemoryInputsSendTheirReferenceAndNoBytes) {
  InferSpec request;
  request.model_name = "m";
  InferInput shared = FloatInput("A", {2}, {1.0f, 2.0f});
  shared.parameters.Set("shared_memory_region", std::string("r"));
  shared.parameters.Set("shared_memory_offset", int64_t{64});
  shared.parameters.Set("shared_memory_byte_size", int64_t{8});
  request.inputs.push_back(std::move(shared));
  request.inputs.push_back(FloatInput("B", {1}, {3.0f}));
  std::string json;
  std::vector<std::span<const std::byte>> parts;
  // JSON and binary requests alike: the shared input has neither `data` nor binary bytes.
  ASSERT_TRUE(EncodeInferRequest(request, &json, &parts).ok());
  EXPECT_EQ(json, R"({"inputs":[{"name":"A","shape":[2],"datatype":"FP32","parameters":)"
                  R"({"shared_memory_region":"r","shared_memory_offset":64,)"
                  R"("shared_memory_byte_size":8}},)"
                  R"({"name":"B","shape":[1],"datatype":"FP32","data":[3]}]})");
  EXPECT_TRUE(parts.empty());
  request.binary_inputs = true;
  ASSERT_TRUE(EncodeInferRequest(request, &json, &parts).ok());
  EXPECT_EQ(json,
            R"({"inputs":[{"name":"A","shape":[2],"datatype":"FP32","parameters":)"
            R"({"shared_memory_region":"r","shared_memory_offset":64,)"
            R"("shared_memory_byte_size":8}},)"
            R"({"name":"B","shape":[1],"datatype":"FP32","parameters":{"binary_data_size":4}}]})");
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].data(), request.inputs[1].tensor.data());
}

TEST(EncodeInferRequestTest, ReusedBuffersAreOverwrittenNotAppended) {
  InferSpec request;
  request.model_name = "m";
  request.inputs.push_back(FloatInput("A", {1}, {1.0f}));
  std::string json;
  std::vector<std::span<const std::byte>> parts;
  ASSERT_TRUE(EncodeInferRequest(request, &json, &parts).ok());
  const std::string first = json;
  ASSERT_TRUE(EncodeInferRequest(request, &json, &parts).ok());
  EXPECT_EQ(json, first);
}

TEST(EncodeInferRequestTest, BytesAndBoolsAreWrittenAsJsonValues) {
  InferSpec request;
  request.inputs.push_back(
      InferInput{.name = "S",
                 .tensor = *Tensor::FromStrings({2}, std::vector<std::string>{"a\"b", "line\n"}),
                 .parameters = {}});
  Tensor bools = *Tensor::Zeros(DataType::kBool, {2});
  bools.mutable_data()[0] = std::byte{1};
  request.inputs.push_back(InferInput{.name = "B", .tensor = bools, .parameters = {}});
  std::string json;
  std::vector<std::span<const std::byte>> parts;
  ASSERT_TRUE(EncodeInferRequest(request, &json, &parts).ok());
  EXPECT_NE(json.find(R"("data":["a\"b","line\n"])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("data":[true,false])"), std::string::npos) << json;
}

TEST(EncodeInferRequestTest, RefusesWhatJsonCannotCarryNamingTheInput) {
  InferSpec request;
  request.inputs.push_back(
      InferInput{.name = "H", .tensor = *Tensor::Zeros(DataType::kFp16, {2}), .parameters = {}});
  std::string json;
  std::vector<std::span<const std::byte>> parts;
  absl::Status status = EncodeInferRequest(request, &json, &parts);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("'H'"), std::string::npos);

  request.inputs[0] =
      InferInput{.name = "S",
                 .tensor = *Tensor::FromStrings({1}, std::vector<std::string>{"\xff\xfe"}),
                 .parameters = {}};
  status = EncodeInferRequest(request, &json, &parts);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("UTF-8"), std::string::npos);

  request.binary_inputs = true;  // binary carries both
  EXPECT_TRUE(EncodeInferRequest(request, &json, &parts).ok());
}

TEST(DecodeInferResponseTest, ReadsNestedJsonDataIntoTensors) {
  const PaddedJson body(
      R"({"model_name":"m","model_version":"2","id":"r1","parameters":{"k":"v"},)"
      R"("outputs":[{"name":"OUT","datatype":"INT32","shape":[2,2],"data":[[1,2],[3,-4]]},)"
      R"({"name":"S","datatype":"BYTES","shape":[1],"data":["hi"]}]})");
  simdjson::dom::parser parser;
  InferResponse response;
  ASSERT_TRUE(DecodeInferResponse(parser, body.json(), {}, nullptr, &response).ok());
  EXPECT_EQ(response.model_name, "m");
  EXPECT_EQ(response.model_version, "2");
  EXPECT_EQ(response.id, "r1");
  EXPECT_EQ(response.parameters.GetString("k"), "v");
  ASSERT_EQ(response.outputs.size(), 2u);
  const Tensor& out = response.outputs[0].tensor;
  EXPECT_EQ(out.dtype(), DataType::kInt32);
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(std::vector<int32_t>(out.values<int32_t>().begin(), out.values<int32_t>().end()),
            (std::vector<int32_t>{1, 2, 3, -4}));
  EXPECT_EQ(response.outputs[1].tensor.StringValues()->at(0), "hi");
}

TEST(DecodeInferResponseTest, BinaryOutputsAreViewsIntoTheBodyKeptAliveByTheOwner) {
  const std::string json =
      R"({"model_name":"m","outputs":[{"name":"A","datatype":"FP32","shape":[2],)"
      R"("parameters":{"binary_data_size":8}},{"name":"B","datatype":"UINT8","shape":[3],)"
      R"("parameters":{"binary_data_size":3}}]})";
  // The binary section starts 4-byte aligned in the buffer, so the FP32 output can be borrowed.
  auto body = std::make_shared<std::string>();
  body->reserve(json.size() + 128);
  while ((reinterpret_cast<uintptr_t>(body->data()) + body->size() + json.size()) %
             alignof(float) !=
         0) {
    body->push_back(' ');  // leading whitespace: still the same JSON document
  }
  const size_t json_offset = body->size();
  body->append(json);
  const float values[2] = {1.5f, -2.0f};
  body->append(reinterpret_cast<const char*>(values), sizeof(values));
  body->append("\x01\x02\x03", 3);
  body->append(kJsonPaddingBytes, ' ');
  const size_t binary_offset = json_offset + json.size();
  std::span<std::byte> binary(reinterpret_cast<std::byte*>(body->data() + binary_offset), 11);
  simdjson::dom::parser parser;
  InferResponse response;
  ASSERT_TRUE(DecodeInferResponse(parser, std::string_view(body->data(), binary_offset), binary,
                                  body, &response)
                  .ok());
  ASSERT_EQ(response.outputs.size(), 2u);
  EXPECT_EQ(static_cast<const void*>(response.outputs[0].tensor.data()),
            static_cast<const void*>(body->data() + binary_offset));
  EXPECT_EQ(response.outputs[0].tensor.values<float>()[1], -2.0f);
  EXPECT_EQ(response.outputs[1].tensor.values<uint8_t>()[2], 3);
  EXPECT_EQ(body.use_count(), 3);  // the two views share ownership of the body
}

// Binary outputs are packed back to back after a JSON header of any length, so an FP32 output can
// start at any address; typed access there would be undefined, so the decoder copies such an
// output into aligned storage and still borrows the ones that need no alignment.
TEST(DecodeInferResponseTest, MisalignedBinaryOutputsAreCopiedIntoAlignedStorage) {
  const std::string json =
      R"({"outputs":[{"name":"B","datatype":"UINT8","shape":[3],)"
      R"("parameters":{"binary_data_size":3}},{"name":"A","datatype":"FP32","shape":[2],)"
      R"("parameters":{"binary_data_size":8}},{"name":"C","datatype":"INT64","shape":[1],)"
      R"("parameters":{"binary_data_size":8}}]})";
  const float floats[2] = {1.5f, -2.0f};
  const int64_t integer = -7;
  // Two placements of the binary section: 8-byte aligned, and at an odd address (a header whose
  // length is not a multiple of 4 after an aligned start); either way A and C, behind the three
  // UINT8 bytes, start misaligned for their element types (at 3 and 11, or 6 and 14, mod 8).
  for (const size_t section_misalignment : {size_t{0}, size_t{3}}) {
    SCOPED_TRACE(section_misalignment);
    auto body = std::make_shared<std::string>();
    body->reserve(json.size() + 128);
    while ((reinterpret_cast<uintptr_t>(body->data()) + body->size() + json.size()) % 8 !=
           section_misalignment) {
      body->push_back(' ');
    }
    const size_t json_offset = body->size();
    body->append(json);
    body->append("\x01\x02\x03", 3);
    body->append(reinterpret_cast<const char*>(floats), sizeof(floats));
    body->append(reinterpret_cast<const char*>(&integer), sizeof(integer));
    body->append(kJsonPaddingBytes, ' ');
    const size_t binary_offset = json_offset + json.size();
    std::span<std::byte> binary(reinterpret_cast<std::byte*>(body->data() + binary_offset), 19);
    simdjson::dom::parser parser;
    InferResponse response;
    ASSERT_TRUE(DecodeInferResponse(parser, std::string_view(body->data(), binary_offset), binary,
                                    body, &response)
                    .ok());
    ASSERT_EQ(response.outputs.size(), 3u);
    const Tensor& bytes = response.outputs[0].tensor;
    const Tensor& a = response.outputs[1].tensor;
    const Tensor& c = response.outputs[2].tensor;
    // UINT8 has no alignment needs: still a view into the body.
    EXPECT_EQ(static_cast<const void*>(bytes.data()),
              static_cast<const void*>(body->data() + binary_offset));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % alignof(float), 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data()) % alignof(int64_t), 0u);
    EXPECT_TRUE(a.aligned());
    EXPECT_TRUE(c.aligned());
    EXPECT_EQ(a.values<float>()[0], 1.5f);
    EXPECT_EQ(a.values<float>()[1], -2.0f);
    EXPECT_EQ(c.values<int64_t>()[0], -7);
    EXPECT_EQ(body.use_count(), 2);  // only the UINT8 view shares the body
  }
}

// The server's On-Demand decoder once read past its index when an unclosed JSON header was
// followed by binary bytes that look like JSON; the client parses with the DOM API, which must
// refuse the same shape of answer whatever the binary section holds.
TEST(DecodeInferResponseTest, AnUnclosedHeaderIsMalformedWhateverBinaryDataFollows) {
  for (std::string_view binary_bytes : {std::string_view(",,,,"), std::string_view(",{\"a\":["),
                                        std::string_view("]}]}"), std::string_view("\0\0\0\0")}) {
    const std::string json = R"({"outputs":[{"name":"A","datatype":"UINT8","shape":[4],)";
    auto body = std::make_shared<std::string>(json);
    body->append(binary_bytes);
    body->append(kJsonPaddingBytes, ',');
    std::span<std::byte> binary(reinterpret_cast<std::byte*>(body->data() + json.size()),
                                binary_bytes.size());
    simdjson::dom::parser parser;
    InferResponse response;
    const absl::Status status = DecodeInferResponse(
        parser, std::string_view(body->data(), json.size()), binary, body, &response);
    EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << binary_bytes;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("malformed infer response"));
  }
}

TEST(DecodeInferResponseTest, ReportsMalformedOutputsByName) {
  simdjson::dom::parser parser;
  InferResponse response;
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"outputs":[{"name":"X","datatype":"FP32","shape":[3],"data":[1,2]}]})", "'X' has 2"},
      {R"({"outputs":[{"name":"X","datatype":"INT8","shape":[1],"data":[300]}]})", "'X'"},
      {R"({"outputs":[{"name":"X","datatype":"FP33","shape":[1],"data":[1]}]})", "FP33"},
      {R"({"outputs":[{"name":"X","datatype":"FP32","shape":[1]}]})", "neither"},
      {R"({"outputs":[{"name":"X","datatype":"FP32","shape":[4],)"
       R"("parameters":{"binary_data_size":16}}]})",
       "past the end"},
      {R"({"outputs":{}})", "'outputs'"},
      {R"([1,2])", "not a JSON object"},
      {R"({"outputs":[)", "malformed infer response"},
  };
  for (const Case& c : cases) {
    const PaddedJson body(c.json);
    absl::Status status = DecodeInferResponse(parser, body.json(), {}, nullptr, &response);
    EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << c.json;
    EXPECT_NE(status.message().find(c.expected), std::string::npos)
        << c.json << " → " << status.message();
  }
}

}  // namespace
}  // namespace brigade::protocol::http
