#include "protocol/http/infer_request_json.h"

#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/model_version.h"

namespace brigade::protocol::http {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kArrivalNs = 5'000'000'000;

absl::StatusOr<std::unique_ptr<InferRequest>> Decode(
    std::string_view body, std::optional<std::string> header_length = std::nullopt,
    std::string_view version = "") {
  HttpInferInput input;
  input.model_name = "m";
  input.model_version = version;
  if (header_length) input.header_length = *header_length;
  input.body = BodyBuffer::FromString(body);
  input.arrival_ns = kArrivalNs;
  return DecodeInferRequest(input);
}

// A binary-extension body: `json` followed by the raw `parts`; returns the body and the header
// length to send.
struct BinaryBody {
  std::string body;
  std::string header_length;
};
BinaryBody MakeBinary(std::string_view json, const std::vector<std::string>& parts) {
  BinaryBody out{std::string(json), std::to_string(json.size())};
  for (const std::string& part : parts) out.body += part;
  return out;
}

template <typename T>
std::string RawBytes(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

std::string SerializedStrings(std::initializer_list<std::string_view> values) {
  std::string out;
  for (std::string_view value : values) AppendSerializedString(value, &out);
  return out;
}

// Checks `result` failed with `code` and a message containing every one of `fragments`.
template <typename T>
void ExpectError(const absl::StatusOr<T>& result, absl::StatusCode code,
                 std::initializer_list<std::string_view> fragments) {
  ASSERT_FALSE(result.ok()) << "expected an error containing " << *fragments.begin();
  EXPECT_EQ(result.status().code(), code) << result.status();
  for (std::string_view fragment : fragments) {
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(std::string(fragment)));
  }
}
template <typename T>
void ExpectInvalid(const absl::StatusOr<T>& result, std::initializer_list<std::string_view> f) {
  ExpectError(result, absl::StatusCode::kInvalidArgument, f);
}

std::string OneInput(std::string_view datatype, std::string_view shape, std::string_view data) {
  return StrCat(R"({"inputs":[{"name":"x","datatype":")", datatype, R"(","shape":)", shape,
                R"(,"data":)", data, "}]}");
}

// ---------------------------------------------------------------- well-formed requests

TEST(DecodeInferRequestTest, ReadsJsonRequestWithIdParametersAndVersion) {
  auto request = Decode(R"({"id":"r-1","parameters":{"flag":true,"n":-3,"big":18446744073709551615,
      "ratio":0.5,"tag":"t\u00e9"},
      "inputs":[{"name":"INPUT0","shape":[2,2],"datatype":"FP32","data":[[1,2.5],[3,4]],
                 "parameters":{"p":1}}],
      "outputs":[{"name":"OUT","parameters":{"classification":3}}]})",
                        std::nullopt, "7");
  ASSERT_TRUE(request.ok()) << request.status();
  const InferRequest& r = **request;
  EXPECT_EQ(r.model_name, "m");
  EXPECT_EQ(r.model_version, 7);
  EXPECT_EQ(r.id, "r-1");
  EXPECT_EQ(r.parameters.GetBool("flag"), true);
  EXPECT_EQ(r.parameters.GetInt("n"), -3);
  EXPECT_EQ(std::get<uint64_t>(*r.parameters.Find("big")), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(r.parameters.GetDouble("ratio"), 0.5);
  EXPECT_EQ(r.parameters.GetString("tag"), "t\xC3\xA9");
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(r.inputs[0].name, "INPUT0");
  EXPECT_EQ(r.inputs[0].tensor.dtype(), DataType::kFp32);
  EXPECT_THAT(r.inputs[0].tensor.shape(), ElementsAre(2, 2));
  EXPECT_THAT(r.inputs[0].tensor.values<float>(), ElementsAre(1.0f, 2.5f, 3.0f, 4.0f));
  EXPECT_EQ(r.inputs[0].parameters.GetInt("p"), 1);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].name, "OUT");
  EXPECT_EQ(r.outputs[0].parameters.GetInt("classification"), 3);
  EXPECT_FALSE(r.outputs[0].binary);
  EXPECT_TRUE(r.deadline.infinite());
}

TEST(DecodeInferRequestTest, FlatAndNestedDataGiveTheSameTensor) {
  auto flat = Decode(OneInput("INT32", "[2,3]", "[1,2,3,4,5,6]"));
  auto nested = Decode(OneInput("INT32", "[2,3]", "[[1,2,3],[4,5,6]]"));
  ASSERT_TRUE(flat.ok()) << flat.status();
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_THAT((*flat)->inputs[0].tensor.values<int32_t>(), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT((*nested)->inputs[0].tensor.values<int32_t>(), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(DecodeInferRequestTest, ReadsEveryJsonDatatypeAtItsLimits) {
  auto check = [](std::string_view datatype, std::string_view data, auto expected) {
    using T = typename decltype(expected)::value_type;
    auto request = Decode(OneInput(datatype, StrCat("[", expected.size(), "]"), data));
    ASSERT_TRUE(request.ok()) << datatype << ": " << request.status();
    const Tensor& tensor = (*request)->inputs[0].tensor;
    EXPECT_EQ(DataTypeName(tensor.dtype()), datatype);
    EXPECT_THAT(tensor.values<T>(), ::testing::ElementsAreArray(expected)) << datatype;
  };
  check("UINT8", "[0,255]", std::vector<uint8_t>{0, 255});
  check("UINT16", "[0,65535]", std::vector<uint16_t>{0, 65535});
  check("UINT32", "[0,4294967295]", std::vector<uint32_t>{0, 4294967295u});
  check("UINT64", "[0,18446744073709551615]",
        std::vector<uint64_t>{0, std::numeric_limits<uint64_t>::max()});
  check("INT8", "[-128,127]", std::vector<int8_t>{-128, 127});
  check("INT16", "[-32768,32767]", std::vector<int16_t>{-32768, 32767});
  check("INT32", "[-2147483648,2147483647]",
        std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 2147483647});
  check("INT64", "[-9223372036854775808,9223372036854775807]",
        std::vector<int64_t>{std::numeric_limits<int64_t>::min(),
                             std::numeric_limits<int64_t>::max()});
  check("FP32", "[-1.5,3,1e-3]", std::vector<float>{-1.5f, 3.0f, 1e-3f});
  check("FP64", "[1e300,-2]", std::vector<double>{1e300, -2.0});
}

TEST(DecodeInferRequestTest, ReadsBoolAsTrueFalse) {
  auto request = Decode(OneInput("BOOL", "[3]", "[true,false,true]"));
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT((*request)->inputs[0].tensor.values<bool>(), ElementsAre(true, false, true));
}

TEST(DecodeInferRequestTest, ReadsBytesFromJsonStringsUnescaped) {
  auto request = Decode(OneInput("BYTES", "[1,3]", R"([["a\"b","","\u00e9\n"]])"));
  ASSERT_TRUE(request.ok()) << request.status();
  auto strings = (*request)->inputs[0].tensor.StringValues();
  ASSERT_TRUE(strings.ok());
  EXPECT_THAT(*strings, ElementsAre("a\"b", "", "\xC3\xA9\n"));
}

TEST(DecodeInferRequestTest, ReadsDataThatPrecedesDatatypeAndShape) {
  auto request = Decode(
      R"({"inputs":[{"data":[[1,2],[3,4]],"name":"a","shape":[2,2],"datatype":"INT64"},
                    {"name":"b","data":[7],"datatype":"UINT8","shape":[1]}]})");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT((*request)->inputs[0].tensor.values<int64_t>(), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT((*request)->inputs[1].tensor.values<uint8_t>(), ElementsAre(7));
}

TEST(DecodeInferRequestTest, ReadsScalarTensors) {
  auto bare = Decode(OneInput("FP64", "[]", "2.5"));
  auto wrapped = Decode(OneInput("FP64", "[]", "[2.5]"));
  ASSERT_TRUE(bare.ok()) << bare.status();
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_THAT((*bare)->inputs[0].tensor.values<double>(), ElementsAre(2.5));
  EXPECT_THAT((*wrapped)->inputs[0].tensor.values<double>(), ElementsAre(2.5));
}

TEST(DecodeInferRequestTest, BinaryInputsBorrowTheBodyInInputOrder) {
  const std::string a = RawBytes<float>({1.0f, 2.0f});
  const std::string c = SerializedStrings({"xy", ""});
  BinaryBody binary = MakeBinary(
      R"({"inputs":[
        {"name":"a","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}},
        {"name":"b","shape":[1],"datatype":"INT32","data":[5]},
        {"name":"c","shape":[2],"datatype":"BYTES","parameters":{"binary_data_size":10,"k":"v"}},
        {"name":"h","shape":[1],"datatype":"FP16","parameters":{"binary_data_size":2}}]})",
      {a, c, RawBytes<uint16_t>({0x3C00})});
  HttpInferInput input;
  input.model_name = "m";
  input.header_length = binary.header_length;
  // As the transport does: the binary section starts aligned.
  input.body = BodyBuffer::FromString(binary.body, std::stoul(binary.header_length));
  const long uses_before = input.body.use_count();
  auto request = DecodeInferRequest(input);
  ASSERT_TRUE(request.ok()) << request.status();
  const InferRequest& r = **request;
  ASSERT_EQ(r.inputs.size(), 4u);
  const std::byte* body_begin = input.body->data();
  const std::byte* body_end = body_begin + input.body->size();
  for (const InferInput& in : {r.inputs[0], r.inputs[2], r.inputs[3]}) {
    EXPECT_GE(in.tensor.data(), body_begin) << in.name << " was copied";
    EXPECT_LT(in.tensor.data(), body_end) << in.name << " was copied";
    EXPECT_FALSE(in.parameters.Contains("binary_data_size")) << in.name;
  }
  EXPECT_GT(input.body.use_count(), uses_before);  // the tensors keep the body alive
  EXPECT_THAT(r.inputs[0].tensor.values<float>(), ElementsAre(1.0f, 2.0f));
  EXPECT_THAT(r.inputs[1].tensor.values<int32_t>(), ElementsAre(5));
  EXPECT_THAT(*r.inputs[2].tensor.StringValues(), ElementsAre("xy", ""));
  EXPECT_EQ(r.inputs[2].parameters.GetString("k"), "v");
  EXPECT_EQ(r.inputs[3].tensor.dtype(), DataType::kFp16);
  EXPECT_THAT(r.inputs[3].tensor.values<uint16_t>(), ElementsAre(0x3C00));
}

TEST(DecodeInferRequestTest, MisalignedBinaryInputsAreCopiedNotBorrowed) {
  // A 1-byte input first leaves the FP32 input at an odd offset.
  BinaryBody binary = MakeBinary(
      R"({"inputs":[
        {"name":"b","shape":[1],"datatype":"UINT8","parameters":{"binary_data_size":1}},
        {"name":"f","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}}]})",
      {std::string("\x07", 1), RawBytes<float>({1.5f, -2.0f})});
  HttpInferInput input;
  input.model_name = "m";
  input.header_length = binary.header_length;
  input.body = BodyBuffer::FromString(binary.body, std::stoul(binary.header_length));
  auto request = DecodeInferRequest(input);
  ASSERT_TRUE(request.ok()) << request.status();
  const Tensor& floats = (*request)->inputs[1].tensor;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(floats.data()) % alignof(float), 0u);
  EXPECT_TRUE(floats.data() < input.body->data() ||
              floats.data() >= input.body->data() + input.body->size());
  EXPECT_THAT(floats.values<float>(), ElementsAre(1.5f, -2.0f));
  // The UINT8 input has no alignment needs and is still borrowed.
  EXPECT_EQ((*request)->inputs[0].tensor.data(),
            input.body->data() + std::stoul(binary.header_length));
}

TEST(DecodeInferRequestTest, BinaryHeaderWithoutBinaryInputsIsAllowed) {
  const std::string json = OneInput("INT8", "[1]", "[1]");
  auto request = Decode(json, std::to_string(json.size()));
  ASSERT_TRUE(request.ok()) << request.status();
}

TEST(DecodeInferRequestTest, ResolvesBinaryDataOutputAndPerOutputOverrides) {
  // binary_data_output comes after `outputs` in the document: it still sets the default.
  auto request = Decode(R"({"inputs":[],
      "outputs":[{"name":"a"},{"name":"b","parameters":{"binary_data":false}},
                 {"name":"c","parameters":{"binary_data":true}}],
      "parameters":{"binary_data_output":true}})");
  ASSERT_TRUE(request.ok()) << request.status();
  const InferRequest& r = **request;
  EXPECT_TRUE(r.all_outputs_binary);
  EXPECT_FALSE(r.parameters.Contains("binary_data_output"));
  ASSERT_EQ(r.outputs.size(), 3u);
  EXPECT_TRUE(r.outputs[0].binary);
  EXPECT_FALSE(r.outputs[1].binary);
  EXPECT_TRUE(r.outputs[2].binary);
  EXPECT_FALSE(r.outputs[2].parameters.Contains("binary_data"));
}

TEST(DecodeInferRequestTest, SetsPriorityAndDeadlineFromParameters) {
  auto request = Decode(R"({"inputs":[],"parameters":{"priority":2,"timeout":1500,"other":"x"}})");
  ASSERT_TRUE(request.ok()) << request.status();
  const InferRequest& r = **request;
  EXPECT_EQ(r.priority, 2u);
  EXPECT_EQ(r.deadline.ns(), kArrivalNs + 1'500'000);
  EXPECT_FALSE(r.parameters.Contains("priority"));
  EXPECT_FALSE(r.parameters.Contains("timeout"));
  EXPECT_EQ(r.parameters.GetString("other"), "x");

  auto no_timeout = Decode(R"({"inputs":[],"parameters":{"timeout":0}})");
  ASSERT_TRUE(no_timeout.ok());
  EXPECT_TRUE((*no_timeout)->deadline.infinite());
}

// ---------------------------------------------------------------- parameters Brigade refuses

// The issue's case: a shared-memory input has no data, and the refusal names the parameter
// rather than the missing data.
TEST(DecodeInferRequestErrorsTest, SharedMemoryInputsAreRefusedWhenTheFeatureIsOff) {
  ExpectInvalid(
      Decode(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[4],)"
             R"("parameters":{"shared_memory_region":"r","shared_memory_byte_size":16}}]})"),
      {"input 'x': parameter 'shared_memory_region'", "disabled"});
  ExpectInvalid(Decode(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[4],)"
                       R"("parameters":{"shared_memory_region":"r"}}]})"),
                {"input 'x': parameter 'shared_memory_region' needs a 'shared_memory_byte_size'"});
}

class FakeRegion final : public SharedMemoryResolver {
 public:
  absl::StatusOr<SharedMemoryBytes> Resolve(const SharedMemoryRef& ref,
                                            std::string_view where) const override {
    if (ref.region != "r" || ref.offset + ref.byte_size > sizeof(bytes)) {
      return absl::InvalidArgumentError(StrCat(where, ": bad region"));
    }
    return SharedMemoryBytes{const_cast<std::byte*>(bytes) + ref.offset,
                             static_cast<size_t>(ref.byte_size), nullptr};
  }
  alignas(64) std::byte bytes[64] = {};
};

TEST(DecodeInferRequestTest, SharedMemoryInputsAreViewsIntoTheRegion) {
  FakeRegion region;
  const float value = 1.5f;
  std::memcpy(region.bytes + 16, &value, sizeof(value));
  const std::string json =
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"parameters":)"
      R"({"shared_memory_region":"r","shared_memory_offset":16,"shared_memory_byte_size":4}}]})";
  HttpInferInput input;
  input.model_name = "m";
  input.body = BodyBuffer::FromString(json);
  input.shared_memory = &region;
  auto request = DecodeInferRequest(input);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ((*request)->inputs[0].tensor.data(), region.bytes + 16);
  EXPECT_EQ((*request)->inputs[0].tensor.values<float>()[0], 1.5f);
  EXPECT_TRUE((*request)->inputs[0].parameters.empty());

  input.body = BodyBuffer::FromString(
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1],"parameters":)"
      R"({"shared_memory_region":"r","shared_memory_byte_size":4}}]})");
  ExpectInvalid(DecodeInferRequest(input), {"input 'x' has a shared_memory_region parameter"});
  input.body = BodyBuffer::FromString(
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"parameters":)"
      R"({"shared_memory_region":"r","shared_memory_offset":-1,"shared_memory_byte_size":4}}]})");
  ExpectInvalid(DecodeInferRequest(input),
                {"input 'x': parameter 'shared_memory_offset' must be a non-negative integer"});
}

// tritonclient.http's infer(..., sequence_id=5, sequence_start=True).
TEST(DecodeInferRequestErrorsTest, SequenceParametersAreRefusedUnlessOff) {
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"sequence_id":5,"sequence_start":true}})"),
                {"request parameter 'sequence_id'", "sequence batching"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"sequence_id":"abc"}})"),
                {"request parameter 'sequence_id'"});
  EXPECT_TRUE(Decode(R"({"inputs":[],"parameters":{"sequence_id":0,"sequence_end":false}})").ok());
}

TEST(DecodeInferRequestErrorsTest, UnknownTritonParametersAreRefusedInEveryScope) {
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"triton_new":1}})"),
                {"request parameter 'triton_new'"});
  ExpectInvalid(Decode(R"({"inputs":[{"name":"x","datatype":"INT32","shape":[1],"data":[1],)"
                       R"("parameters":{"triton_new":1}}]})"),
                {"input 'x' parameter 'triton_new'"});
  ExpectInvalid(Decode(R"({"inputs":[],"outputs":[{"name":"y","parameters":{"triton_new":1}}]})"),
                {"output 'y' parameter 'triton_new'"});
}

// ---------------------------------------------------------------- malformed requests

TEST(DecodeInferRequestErrorsTest, MalformedJson) {
  ExpectInvalid(Decode(R"({"inputs":[})"), {"inputs[0]"});
  ExpectInvalid(Decode(R"({"inputs":[]} trailing)"), {"malformed JSON"});
  ExpectInvalid(Decode(R"({"inputs":[]} {"inputs":[]})"), {"after the top-level object"});
  ExpectInvalid(Decode(R"({"inputs":[{"name":"x",}]})"), {"malformed JSON"});
  ExpectInvalid(Decode(R"({"inputs")"), {"malformed JSON"});
  ExpectInvalid(Decode("[1]"), {"must be a JSON object"});
  ExpectInvalid(Decode(""), {"empty"});
  ExpectInvalid(Decode("{\"inputs\":[],\"id\":\"\xFF\"}"), {"malformed JSON"});
  ExpectInvalid(Decode(OneInput("INT32", "[3]", "[1,2 3]")), {"input 'x'"});
}

TEST(DecodeInferRequestErrorsTest, MissingUnknownAndDuplicateFields) {
  ExpectInvalid(Decode("{}"), {"no 'inputs'"});
  ExpectInvalid(Decode(R"({"inputs":{}})"), {"'inputs' must be an array"});
  ExpectInvalid(Decode(R"({"inputs":[1]})"), {"inputs[0] must be a JSON object"});
  ExpectInvalid(Decode(R"({"inputs":[],"model":"m"})"), {"unknown field 'model'"});
  ExpectInvalid(Decode(R"({"inputs":[],"inputs":[]})"), {"'inputs' twice"});
  ExpectInvalid(Decode(R"({"inputs":[{"shape":[1],"datatype":"INT8","data":[1]}]})"),
                {"inputs[0] has no 'name'"});
  ExpectInvalid(Decode(R"({"inputs":[{"name":"x","shape":[1],"data":[1]}]})"),
                {"input 'x' has no 'datatype'"});
  ExpectInvalid(Decode(R"({"inputs":[{"name":"x","datatype":"INT8","data":[1]}]})"),
                {"input 'x' has no 'shape'"});
  ExpectInvalid(Decode(R"({"inputs":[{"name":"x","datatype":"INT8","shape":[1]}]})"),
                {"input 'x' has neither 'data' nor a binary_data_size"});
  ExpectInvalid(
      Decode(R"({"inputs":[{"name":"x","datatype":"INT8","shape":[1],"data":[1],"dtype":1}]})"),
      {"input 'x' has an unknown field 'dtype'"});
  ExpectInvalid(
      Decode(R"({"inputs":[{"name":"x","name":"y","datatype":"INT8","shape":[1],"data":[1]}]})"),
      {"'name' twice"});
  ExpectInvalid(Decode(R"({"inputs":[{"name":"x","datatype":"INT8","shape":[1],"data":[1]},
                                     {"name":"x","datatype":"INT8","shape":[1],"data":[1]}]})"),
                {"input 'x' appears twice"});
  ExpectInvalid(Decode(R"({"inputs":[],"outputs":[{"name":"o","binary":true}]})"),
                {"output 'o' has an unknown field 'binary'"});
  ExpectInvalid(Decode(R"({"inputs":[],"outputs":[{}]})"), {"outputs[0] has no 'name'"});
  ExpectInvalid(Decode(R"({"inputs":[],"outputs":[{"name":"o"},{"name":"o"}]})"),
                {"output 'o' appears twice"});
  ExpectInvalid(Decode(R"({"inputs":[],"outputs":"o"})"), {"'outputs' must be an array"});
}

TEST(DecodeInferRequestErrorsTest, FieldsOfTheWrongType) {
  ExpectInvalid(Decode(R"({"inputs":[],"id":5})"), {"request id must be a string"});
  ExpectInvalid(Decode(R"({"inputs":[{"name":1,"datatype":"INT8","shape":[1],"data":[1]}]})"),
                {"inputs[0] name must be a string"});
  ExpectInvalid(Decode(R"({"inputs":[{"name":"x","datatype":8,"shape":[1],"data":[1]}]})"),
                {"input 'x' datatype must be a string"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":[]})"),
                {"request parameters must be a JSON object"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"k":null}})"),
                {"request parameters 'k' must be a bool, number or string"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"k":{"a":1}}})"), {"'k'"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"k":1,"k":2}})"), {"'k' twice"});
}

TEST(DecodeInferRequestErrorsTest, UnknownDatatype) {
  ExpectInvalid(Decode(OneInput("FLOAT32", "[1]", "[1]")),
                {"input 'x'", "unknown datatype 'FLOAT32'"});
  ExpectInvalid(Decode(OneInput("fp32", "[1]", "[1]")), {"unknown datatype 'fp32'"});
}

TEST(DecodeInferRequestErrorsTest, BadShapes) {
  ExpectInvalid(Decode(OneInput("INT8", "[-1]", "[1]")), {"input 'x'", "dimension 0 is -1"});
  ExpectInvalid(Decode(OneInput("INT8", "[1.5]", "[1]")), {"input 'x'", "dimension 0 (1.5)"});
  ExpectInvalid(Decode(OneInput("INT8", "3", "[1]")), {"input 'x'", "shape must be an array"});
  ExpectInvalid(Decode(OneInput("INT8", "[1099511627776,1099511627776]", "[1]")),
                {"input 'x' shape"});
  // A shape the body cannot possibly fill is refused before anything is allocated.
  ExpectInvalid(Decode(OneInput("FP64", "[1000000000]", "[1]")),
                {"input 'x'", "1000000000 elements"});
}

TEST(DecodeInferRequestErrorsTest, ElementCountDiffersFromShape) {
  ExpectInvalid(Decode(OneInput("INT32", "[2,2]", "[1,2,3]")),
                {"input 'x'", "3 elements", "needs 4"});
  ExpectInvalid(Decode(OneInput("INT32", "[2]", "[1,2,3]")), {"input 'x'", "more than the 2"});
  ExpectInvalid(Decode(OneInput("BYTES", "[2]", R"(["a"])")), {"input 'x'", "1 elements"});
}

TEST(DecodeInferRequestErrorsTest, ElementsOfTheWrongTypeOrOutOfRange) {
  ExpectInvalid(Decode(OneInput("UINT8", "[2]", "[1,300]")),
                {"input 'x'", "element 1 (300)", "UINT8", "[0, 255]"});
  ExpectInvalid(Decode(OneInput("UINT8", "[1]", "[-1]")), {"element 0 (-1)", "UINT8"});
  ExpectInvalid(Decode(OneInput("INT8", "[1]", "[128]")), {"element 0 (128)", "[-128, 127]"});
  ExpectInvalid(Decode(OneInput("INT32", "[1]", "[1.5]")), {"element 0 (1.5)", "INT32"});
  ExpectInvalid(Decode(OneInput("INT32", "[1]", "[true]")), {"element 0 (true)"});
  ExpectInvalid(Decode(OneInput("UINT64", "[1]", "[18446744073709551616]")), {"element 0"});
  ExpectInvalid(Decode(OneInput("FP32", "[2]", R"([1,"2"])")), {"element 1 (\"2\")", "FP32"});
  ExpectInvalid(Decode(OneInput("FP32", "[1]", "[1e39]")), {"element 0 (1e39)", "FP32"});
  ExpectInvalid(Decode(OneInput("FP64", "[1]", "[null]")), {"element 0 (null)", "FP64"});
  ExpectInvalid(Decode(OneInput("BOOL", "[1]", "[1]")), {"element 0 (1)", "true or false"});
  ExpectInvalid(Decode(OneInput("BYTES", "[1]", "[1]")), {"element 0 (1)", "JSON string"});
  ExpectInvalid(Decode(OneInput("INT32", "[1]", R"([{"a":1}])")), {"element 0"});
}

TEST(DecodeInferRequestErrorsTest, HalfPrecisionInJsonPointsToBinaryData) {
  ExpectInvalid(Decode(OneInput("FP16", "[1]", "[1]")), {"input 'x'", "FP16", "binary_data_size"});
  ExpectInvalid(Decode(OneInput("BF16", "[1]", "[1]")), {"BF16", "binary_data_size"});
}

TEST(DecodeInferRequestErrorsTest, NestingDeeperThanOneHundred) {
  const std::string deep = std::string(120, '[') + "1" + std::string(120, ']');
  ExpectInvalid(Decode(OneInput("INT8", "[1]", deep)), {"input 'x'", "nested deeper than"});
  // Exactly at the limit is fine: data sits at depth 4, so 97 levels of brackets reach 100.
  const std::string at_limit = std::string(97, '[') + "1" + std::string(97, ']');
  EXPECT_TRUE(Decode(OneInput("INT8", "[1]", at_limit)).ok());
  const std::string over_limit = std::string(98, '[') + "1" + std::string(98, ']');
  ExpectInvalid(Decode(OneInput("INT8", "[1]", over_limit)), {"nested deeper than"});
}

TEST(DecodeInferRequestErrorsTest, BadReservedParameters) {
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"binary_data_output":1}})"),
                {"'binary_data_output' must be true or false"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"priority":-1}})"), {"'priority'"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"priority":4294967296}})"), {"'priority'"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"priority":"1"}})"), {"'priority'"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"timeout":-5}})"), {"'timeout'"});
  ExpectInvalid(Decode(R"({"inputs":[],"parameters":{"timeout":1.5}})"), {"'timeout'"});
  ExpectInvalid(
      Decode(R"({"inputs":[],"outputs":[{"name":"o","parameters":{"binary_data":"yes"}}]})"),
      {"output 'o'", "'binary_data' must be true or false"});
}

TEST(DecodeInferRequestErrorsTest, BadModelVersion) {
  ExpectInvalid(Decode(R"({"inputs":[]})", std::nullopt, "abc"), {"model version 'abc'"});
  ExpectInvalid(Decode(R"({"inputs":[]})", std::nullopt, "-1"), {"model version '-1'"});
  EXPECT_EQ(*ParseModelVersion(""), -1);
  EXPECT_EQ(*ParseModelVersion("12"), 12);
}

TEST(DecodeInferRequestErrorsTest, BadBinarySections) {
  const std::string json_a =
      R"({"inputs":[{"name":"a","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}}]})";
  const std::string floats = RawBytes<float>({1.0f, 2.0f});

  // binary_data_size that does not match shape * element size.
  BinaryBody wrong_size = MakeBinary(
      R"({"inputs":[{"name":"a","shape":[3],"datatype":"FP32","parameters":{"binary_data_size":8}}]})",
      {floats});
  ExpectInvalid(Decode(wrong_size.body, wrong_size.header_length),
                {"input 'a' binary data", "needs 12 bytes, got 8"});

  // Sections that do not add up to the body: bytes left over.
  BinaryBody extra = MakeBinary(json_a, {floats, "junk"});
  ExpectInvalid(Decode(extra.body, extra.header_length),
                {"binary section", "12 bytes", "add up to 8"});

  // A section larger than what is left.
  BinaryBody short_body = MakeBinary(json_a, {floats.substr(0, 4)});
  ExpectInvalid(Decode(short_body.body, short_body.header_length),
                {"input 'a'", "binary_data_size 8 exceeds the 4 bytes left"});

  // Header length beyond the body, not a number, or zero.
  ExpectInvalid(Decode(json_a, std::to_string(json_a.size() + 1)),
                {"Inference-Header-Content-Length", "exceeds the body size"});
  ExpectInvalid(Decode(json_a, "12x"), {"Inference-Header-Content-Length '12x'"});
  ExpectInvalid(Decode(json_a, "-3"), {"Inference-Header-Content-Length '-3'"});
  ExpectInvalid(Decode(json_a + floats, "0"), {"raw binary request", "exactly one input"});

  // binary_data_size without a binary section, with data, or not an integer.
  ExpectInvalid(Decode(json_a), {"input 'a'", "no binary section"});
  BinaryBody both = MakeBinary(
      R"({"inputs":[{"name":"a","shape":[1],"datatype":"INT8","data":[1],"parameters":{"binary_data_size":1}}]})",
      {"x"});
  ExpectInvalid(Decode(both.body, both.header_length),
                {"input 'a'", "both 'data' and a binary_data_size"});
  BinaryBody negative = MakeBinary(
      R"({"inputs":[{"name":"a","shape":[0],"datatype":"INT8","parameters":{"binary_data_size":-1}}]})",
      {});
  ExpectInvalid(Decode(negative.body, negative.header_length),
                {"input 'a'", "'binary_data_size' must be a non-negative integer"});

  // Malformed BYTES serialization in a binary section.
  BinaryBody bad_bytes = MakeBinary(
      R"({"inputs":[{"name":"s","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":6}}]})",
      {std::string("\x09\x00\x00\x00xy", 6)});
  ExpectInvalid(Decode(bad_bytes.body, bad_bytes.header_length), {"input 's' binary data"});

  // A JSON header that is itself malformed, with the binary part after it.
  BinaryBody bad_header = MakeBinary(R"({"inputs":[)", {floats});
  ExpectInvalid(Decode(bad_header.body, bad_header.header_length),
                {"malformed JSON in the JSON header"});
}

// The binary section is not padding: its first byte must not steer the parse of an unclosed
// header. (A ',' there made simdjson On-Demand take it for the next array element and read past
// the end of its index; found by protocol_http_infer_request_json_fuzz.)
TEST(DecodeInferRequestErrorsTest, UnclosedJsonHeaderIsRefusedWhateverBinaryDataFollows) {
  const std::string unclosed =
      R"({"inputs":[{"name":"a","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}})";
  for (std::string_view first_binary_byte : {",", "]", "}", " ", "{", "\"", "1"}) {
    SCOPED_TRACE(first_binary_byte);
    BinaryBody body = MakeBinary(unclosed, {std::string(first_binary_byte) + "{\"name\":1}]}"});
    ExpectInvalid(Decode(body.body, body.header_length), {"malformed JSON in inputs"});
  }
}

TEST(DecodeInferRequestErrorsTest, TensorsOverTheSizeLimitAreResourceExhausted) {
  BinaryBody huge = MakeBinary(
      R"({"inputs":[{"name":"a","shape":[68719476736],"datatype":"FP32","parameters":{"binary_data_size":4}}]})",
      {RawBytes<float>({1.0f})});
  ExpectError(Decode(huge.body, huge.header_length), absl::StatusCode::kResourceExhausted,
              {"input 'a'"});
}

absl::StatusOr<std::unique_ptr<InferRequest>> DecodeRaw(std::string_view body,
                                                        const protocol::TensorMetadata& spec) {
  HttpInferInput input;
  input.model_name = "m";
  input.header_length = "0";
  input.body = BodyBuffer::FromString(body);
  input.raw_input = &spec;
  return DecodeInferRequest(input);
}

TEST(DecodeInferRequestTest, RawBinaryRequestMakesTheBodyTheOneBytesElement) {
  const protocol::TensorMetadata image{"IMAGE", DataType::kBytes, {-1, 1}, ""};
  const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + std::string(3, '\0');
  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeRaw(png, image);
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_EQ((*request)->inputs.size(), 1u);
  const InferInput& input = (*request)->inputs[0];
  EXPECT_EQ(input.name, "IMAGE");
  EXPECT_EQ(input.tensor.shape(), (Shape{1, 1}));
  EXPECT_THAT(*input.tensor.StringValues(), ElementsAre(png));
  EXPECT_TRUE((*request)->all_outputs_binary);
  EXPECT_TRUE((*request)->outputs.empty());

  const protocol::TensorMetadata pair{"TEXT", DataType::kBytes, {-1, 2}, ""};
  ExpectInvalid(DecodeRaw("hello", pair),
                {"raw binary request for input 'TEXT' (BYTES[-1,2])", "exactly one BYTES element"});
}

TEST(DecodeInferRequestTest, RawBinaryRequestDeducesTheLastVariableDimFromTheSize) {
  const protocol::TensorMetadata floats{"x", DataType::kFp32, {-1, 2, -1}, ""};
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  const std::string body(reinterpret_cast<const char*>(values.data()), 24);
  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeRaw(body, floats);
  ASSERT_TRUE(request.ok()) << request.status();
  const Tensor& tensor = (*request)->inputs[0].tensor;
  EXPECT_EQ(tensor.shape(), (Shape{1, 2, 3}));
  EXPECT_THAT(tensor.values<float>(), ElementsAre(1, 2, 3, 4, 5, 6));

  ExpectInvalid(DecodeRaw(body.substr(0, 10), floats), {"10 bytes", "4-byte elements"});
  ExpectInvalid(DecodeRaw(body.substr(0, 12), floats), {"3 elements do not fit"});
  const protocol::TensorMetadata fixed{"y", DataType::kInt32, {4}, ""};
  ExpectInvalid(DecodeRaw(body, fixed), {"input 'y' (INT32[4])", "6 elements do not fit"});
  ExpectInvalid(DecodeRaw("", floats), {"the body is empty"});
}

}  // namespace
}  // namespace brigade::protocol::http
