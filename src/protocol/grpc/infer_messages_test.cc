#include "protocol/grpc/infer_messages.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/model_version.h"

namespace brigade::protocol::grpc {
namespace {

using inference::ModelInferRequest;
using inference::ModelInferResponse;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kArrivalNs = 5'000'000'000;

std::shared_ptr<ModelInferRequest> NewRequest() {
  auto message = std::make_shared<ModelInferRequest>();
  message->set_model_name("m");
  return message;
}

ModelInferRequest::InferInputTensor* AddInput(ModelInferRequest* message, const std::string& name,
                                              const std::string& datatype,
                                              std::vector<int64_t> shape) {
  ModelInferRequest::InferInputTensor* input = message->add_inputs();
  input->set_name(name);
  input->set_datatype(datatype);
  for (int64_t dim : shape) input->add_shape(dim);
  return input;
}

template <typename T>
std::string RawBytes(std::vector<T> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

absl::StatusOr<std::unique_ptr<InferRequest>> Decode(std::shared_ptr<ModelInferRequest> message) {
  return DecodeModelInferRequest(std::move(message), kArrivalNs);
}

void ExpectInvalid(const absl::StatusOr<std::unique_ptr<InferRequest>>& result,
                   const std::string& fragment) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(fragment));
}

TEST(GrpcInferCodecTest, CopiesRequestFieldsAndStampsArrival) {
  auto message = NewRequest();
  message->set_model_version("3");
  message->set_id("req-7");
  AddInput(message.get(), "x", "FP32", {2})->mutable_contents()->add_fp32_contents(1.5f);
  message->mutable_inputs(0)->mutable_contents()->add_fp32_contents(-2.0f);
  auto request = Decode(message);
  ASSERT_TRUE(request.ok()) << request.status();
  const InferRequest& r = **request;
  EXPECT_EQ(r.model_name, "m");
  EXPECT_EQ(r.model_version, 3);
  EXPECT_EQ(r.id, "req-7");
  EXPECT_EQ(r.protocol, Protocol::kGrpc);
  EXPECT_EQ(r.clock.at(Stage::kArrival), kArrivalNs);
  EXPECT_TRUE(r.deadline.infinite());
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(r.inputs[0].tensor.dtype(), DataType::kFp32);
  EXPECT_THAT(r.inputs[0].tensor.values<float>(), ElementsAre(1.5f, -2.0f));
  EXPECT_TRUE(r.outputs.empty());
}

TEST(GrpcInferCodecTest, RawInputsAreBorrowedAndKeepTheMessageAlive) {
  auto message = NewRequest();
  AddInput(message.get(), "a", "INT32", {1, 3});
  AddInput(message.get(), "b", "UINT8", {2});
  message->add_raw_input_contents(RawBytes<int32_t>({7, -8, 9}));
  message->add_raw_input_contents(RawBytes<uint8_t>({250, 1}));
  const char* raw_a = message->raw_input_contents(0).data();
  std::weak_ptr<ModelInferRequest> weak = message;

  auto request = Decode(std::move(message));
  ASSERT_TRUE(request.ok()) << request.status();
  const Tensor& a = (*request)->inputs[0].tensor;
  EXPECT_EQ(reinterpret_cast<const char*>(a.data()), raw_a) << "raw input was copied";
  // The decoder held the only other reference; the tensors now keep the message alive.
  EXPECT_FALSE(weak.expired());
  EXPECT_THAT(a.values<int32_t>(), ElementsAre(7, -8, 9));
  EXPECT_THAT((*request)->inputs[1].tensor.values<uint8_t>(), ElementsAre(250, 1));

  Tensor slice = *a.SliceRows(0, 1);  // e.g. an output aliasing the input
  request->reset();
  EXPECT_FALSE(weak.expired()) << "a slice of a raw input must keep the message alive";
  EXPECT_THAT(slice.values<int32_t>(), ElementsAre(7, -8, 9));
  slice = Tensor();
  EXPECT_TRUE(weak.expired());
}

TEST(GrpcInferCodecTest, TypedContentsDecodeForEveryTypedDatatype) {
  auto message = NewRequest();
  auto* b = AddInput(message.get(), "bool", "BOOL", {2})->mutable_contents();
  b->add_bool_contents(true);
  b->add_bool_contents(false);
  auto* i8 = AddInput(message.get(), "i8", "INT8", {2})->mutable_contents();
  i8->add_int_contents(-128);
  i8->add_int_contents(127);
  auto* i16 = AddInput(message.get(), "i16", "INT16", {1})->mutable_contents();
  i16->add_int_contents(-32768);
  auto* i32 = AddInput(message.get(), "i32", "INT32", {1})->mutable_contents();
  i32->add_int_contents(std::numeric_limits<int32_t>::min());
  auto* i64 = AddInput(message.get(), "i64", "INT64", {1})->mutable_contents();
  i64->add_int64_contents(std::numeric_limits<int64_t>::max());
  auto* u8 = AddInput(message.get(), "u8", "UINT8", {1})->mutable_contents();
  u8->add_uint_contents(255);
  auto* u16 = AddInput(message.get(), "u16", "UINT16", {1})->mutable_contents();
  u16->add_uint_contents(65535);
  auto* u32 = AddInput(message.get(), "u32", "UINT32", {1})->mutable_contents();
  u32->add_uint_contents(std::numeric_limits<uint32_t>::max());
  auto* u64 = AddInput(message.get(), "u64", "UINT64", {1})->mutable_contents();
  u64->add_uint64_contents(std::numeric_limits<uint64_t>::max());
  auto* f64 = AddInput(message.get(), "f64", "FP64", {1})->mutable_contents();
  f64->add_fp64_contents(0.25);
  auto* s = AddInput(message.get(), "s", "BYTES", {2})->mutable_contents();
  s->add_bytes_contents("hi");
  s->add_bytes_contents("");

  auto request = Decode(message);
  ASSERT_TRUE(request.ok()) << request.status();
  const InferRequest& r = **request;
  ASSERT_EQ(r.inputs.size(), 11u);
  EXPECT_THAT(r.FindInput("bool")->tensor.values<bool>(), ElementsAre(true, false));
  EXPECT_THAT(r.FindInput("i8")->tensor.values<int8_t>(), ElementsAre(-128, 127));
  EXPECT_THAT(r.FindInput("i16")->tensor.values<int16_t>(), ElementsAre(-32768));
  EXPECT_THAT(r.FindInput("i32")->tensor.values<int32_t>(),
              ElementsAre(std::numeric_limits<int32_t>::min()));
  EXPECT_THAT(r.FindInput("i64")->tensor.values<int64_t>(),
              ElementsAre(std::numeric_limits<int64_t>::max()));
  EXPECT_THAT(r.FindInput("u8")->tensor.values<uint8_t>(), ElementsAre(255));
  EXPECT_THAT(r.FindInput("u16")->tensor.values<uint16_t>(), ElementsAre(65535));
  EXPECT_THAT(r.FindInput("u32")->tensor.values<uint32_t>(),
              ElementsAre(std::numeric_limits<uint32_t>::max()));
  EXPECT_THAT(r.FindInput("u64")->tensor.values<uint64_t>(),
              ElementsAre(std::numeric_limits<uint64_t>::max()));
  EXPECT_THAT(r.FindInput("f64")->tensor.values<double>(), ElementsAre(0.25));
  const Tensor& strings = r.FindInput("s")->tensor;
  EXPECT_EQ(strings.dtype(), DataType::kBytes);
  EXPECT_EQ(strings.byte_size(), 4u + 2u + 4u);
  EXPECT_THAT(*strings.StringValues(), ElementsAre("hi", ""));
}

TEST(GrpcInferCodecTest, OutOfRangeTypedValuesAreRejectedNamingTheElement) {
  struct Case {
    const char* datatype;
    int64_t value;
    const char* fragment;
  };
  for (const Case& c :
       {Case{"INT8", 128, "int_contents[1] = 128"}, Case{"INT8", -129, "int_contents[1] = -129"},
        Case{"INT16", 40000, "int_contents[1] = 40000"},
        Case{"UINT8", 256, "uint_contents[1] = 256"},
        Case{"UINT16", 70000, "uint_contents[1] = 70000"}}) {
    SCOPED_TRACE(c.datatype);
    auto message = NewRequest();
    auto* contents = AddInput(message.get(), "x", c.datatype, {2})->mutable_contents();
    if (c.datatype[0] == 'U') {
      contents->add_uint_contents(1);
      contents->add_uint_contents(static_cast<uint32_t>(c.value));
    } else {
      contents->add_int_contents(1);
      contents->add_int_contents(static_cast<int32_t>(c.value));
    }
    auto result = Decode(message);
    ExpectInvalid(result, c.fragment);
    ExpectInvalid(result, "input 'x'");
  }
}

TEST(GrpcInferCodecTest, UnknownDatatypeIsRejectedNamingTheInput) {
  auto message = NewRequest();
  AddInput(message.get(), "x", "FP33", {1})->mutable_contents()->add_fp32_contents(1);
  ExpectInvalid(Decode(message), "input 'x': unknown datatype 'FP33'");
}

TEST(GrpcInferCodecTest, TypedCountMustMatchTheShape) {
  auto message = NewRequest();
  AddInput(message.get(), "x", "FP32", {2, 2})->mutable_contents()->add_fp32_contents(1);
  ExpectInvalid(Decode(message), "fp32_contents holds 1 values but shape [2,2] has 4 elements");
}

TEST(GrpcInferCodecTest, HugeShapeWithoutDataIsRejectedBeforeAllocating) {
  auto message = NewRequest();
  AddInput(message.get(), "x", "FP64", {int64_t{1} << 40, 1 << 20});
  auto result = Decode(message);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("input 'x'"));
}

TEST(GrpcInferCodecTest, NegativeDimensionIsRejected) {
  auto message = NewRequest();
  AddInput(message.get(), "x", "INT64", {-1});
  ExpectInvalid(Decode(message), "input 'x': shape [-1]");
}

TEST(GrpcInferCodecTest, ContentsFieldOfAnotherDatatypeIsRejected) {
  auto message = NewRequest();
  auto* contents = AddInput(message.get(), "x", "INT32", {1})->mutable_contents();
  contents->add_int_contents(1);
  contents->add_fp32_contents(1.0f);
  ExpectInvalid(Decode(message), "datatype INT32 takes int_contents, but fp32_contents is set");
}

TEST(GrpcInferCodecTest, HalfPrecisionTypesMustTravelRaw) {
  for (const char* datatype : {"FP16", "BF16"}) {
    auto typed = NewRequest();
    AddInput(typed.get(), "h", datatype, {1})->mutable_contents()->add_fp32_contents(1);
    ExpectInvalid(Decode(typed), "has no typed contents field; send it in raw_input_contents");

    auto raw = NewRequest();
    AddInput(raw.get(), "h", datatype, {2});
    raw->add_raw_input_contents(RawBytes<uint16_t>({0x3c00, 0x4000}));
    auto request = Decode(raw);
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_EQ((*request)->inputs[0].tensor.byte_size(), 4u);
  }
}

TEST(GrpcInferCodecTest, MixingRawAndTypedContentsIsRejected) {
  auto message = NewRequest();
  AddInput(message.get(), "a", "INT32", {1});
  AddInput(message.get(), "b", "INT32", {1})->mutable_contents()->add_int_contents(1);
  message->add_raw_input_contents(RawBytes<int32_t>({1}));
  message->add_raw_input_contents(RawBytes<int32_t>({2}));
  ExpectInvalid(Decode(message),
                "input 'b': contents must not be set when the request uses raw_input_contents");
}

TEST(GrpcInferCodecTest, RawEntryCountMustMatchInputCount) {
  auto message = NewRequest();
  AddInput(message.get(), "a", "INT32", {1});
  AddInput(message.get(), "b", "INT32", {1});
  message->add_raw_input_contents(RawBytes<int32_t>({1}));
  ExpectInvalid(Decode(message), "raw_input_contents has 1 entries for 2 inputs");
}

TEST(GrpcInferCodecTest, RawSizeMustMatchShapeTimesElementSize) {
  auto message = NewRequest();
  AddInput(message.get(), "a", "INT32", {2});
  message->add_raw_input_contents(RawBytes<int32_t>({1, 2, 3}));
  ExpectInvalid(Decode(message), "input 'a' (raw_input_contents[0])");
}

TEST(GrpcInferCodecTest, RawBytesElementsMustBeLengthPrefixed) {
  std::string good;
  AppendSerializedString("abc", &good);
  AppendSerializedString("", &good);
  auto message = NewRequest();
  AddInput(message.get(), "s", "BYTES", {2});
  message->add_raw_input_contents(good);
  auto request = Decode(message);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT(*(*request)->inputs[0].tensor.StringValues(), ElementsAre("abc", ""));

  auto truncated = NewRequest();
  AddInput(truncated.get(), "s", "BYTES", {2});
  truncated->add_raw_input_contents(good.substr(0, good.size() - 2));
  ExpectInvalid(Decode(truncated), "input 's' (raw_input_contents[0])");
}

TEST(GrpcInferCodecTest, MissingDataIsRejected) {
  auto message = NewRequest();
  AddInput(message.get(), "x", "UINT64", {3});
  ExpectInvalid(Decode(message), "uint64_contents holds 0 values");
}

TEST(GrpcInferCodecTest, ZeroElementInputNeedsNoData) {
  auto message = NewRequest();
  AddInput(message.get(), "x", "FP32", {0, 4});
  auto request = Decode(message);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ((*request)->inputs[0].tensor.num_elements(), 0);
}

TEST(GrpcInferCodecTest, DuplicateNamesAreRejected) {
  auto inputs = NewRequest();
  AddInput(inputs.get(), "x", "INT32", {1})->mutable_contents()->add_int_contents(1);
  AddInput(inputs.get(), "x", "INT32", {1})->mutable_contents()->add_int_contents(2);
  ExpectInvalid(Decode(inputs), "input 'x': appears more than once");

  auto outputs = NewRequest();
  outputs->add_outputs()->set_name("y");
  outputs->add_outputs()->set_name("y");
  ExpectInvalid(Decode(outputs), "output 'y' is requested more than once");
}

TEST(GrpcInferCodecTest, EmptyNamesAreRejected) {
  auto model = NewRequest();
  model->clear_model_name();
  ExpectInvalid(Decode(model), "model_name is empty");

  auto input = NewRequest();
  AddInput(input.get(), "", "INT32", {0});
  ExpectInvalid(Decode(input), "inputs[0] has no name");
}

TEST(GrpcInferCodecTest, ParametersOfEveryTypeAreKept) {
  auto message = NewRequest();
  auto& params = *message->mutable_parameters();
  params["b"].set_bool_param(true);
  params["i"].set_int64_param(-4);
  params["s"].set_string_param("text");
  params["d"].set_double_param(0.5);
  params["u"].set_uint64_param(std::numeric_limits<uint64_t>::max());
  auto* output = message->add_outputs();
  output->set_name("y");
  (*output->mutable_parameters())["classification"].set_int64_param(3);
  auto* input = AddInput(message.get(), "x", "INT32", {1});
  input->mutable_contents()->add_int_contents(1);
  (*input->mutable_parameters())["tag"].set_string_param("v");

  auto request = Decode(message);
  ASSERT_TRUE(request.ok()) << request.status();
  const Parameters& p = (*request)->parameters;
  EXPECT_EQ(p.size(), 5u);
  EXPECT_EQ(p.GetBool("b"), true);
  EXPECT_EQ(p.GetInt("i"), -4);
  EXPECT_EQ(p.GetString("s"), "text");
  EXPECT_EQ(p.GetDouble("d"), 0.5);
  ASSERT_NE(p.Find("u"), nullptr);
  EXPECT_EQ(std::get<uint64_t>(*p.Find("u")), std::numeric_limits<uint64_t>::max());
  ASSERT_EQ((*request)->outputs.size(), 1u);
  EXPECT_EQ((*request)->outputs[0].name, "y");
  EXPECT_EQ((*request)->outputs[0].parameters.GetInt("classification"), 3);
  EXPECT_EQ((*request)->inputs[0].parameters.GetString("tag"), "v");
}

TEST(GrpcInferCodecTest, PriorityAndTimeoutBecomeRequestFields) {
  auto message = NewRequest();
  (*message->mutable_parameters())["priority"].set_int64_param(2);
  (*message->mutable_parameters())["timeout"].set_uint64_param(1500);
  auto request = Decode(message);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ((*request)->priority, 2u);
  EXPECT_EQ((*request)->deadline.ns(), kArrivalNs + 1'500'000);
  EXPECT_FALSE((*request)->parameters.Contains("priority"));
  EXPECT_FALSE((*request)->parameters.Contains("timeout"));
}

TEST(GrpcInferCodecTest, ZeroTimeoutMeansNoDeadline) {
  auto message = NewRequest();
  (*message->mutable_parameters())["timeout"].set_int64_param(0);
  auto request = Decode(message);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE((*request)->deadline.infinite());
}

TEST(GrpcInferCodecTest, BadScheduleParametersAreRejected) {
  auto negative = NewRequest();
  (*negative->mutable_parameters())["priority"].set_int64_param(-1);
  ExpectInvalid(Decode(negative), "parameter 'priority' must be a non-negative integer");

  auto too_big = NewRequest();
  (*too_big->mutable_parameters())["priority"].set_uint64_param(uint64_t{1} << 33);
  ExpectInvalid(Decode(too_big), "parameter 'priority' = 8589934592 exceeds");

  auto text = NewRequest();
  (*text->mutable_parameters())["timeout"].set_string_param("100");
  ExpectInvalid(Decode(text), "parameter 'timeout' must be a non-negative integer");
}

TEST(GrpcInferCodecTest, ParameterWithoutValueIsRejected) {
  auto message = NewRequest();
  (*message->mutable_parameters())["empty"];
  ExpectInvalid(Decode(message), "parameter 'empty' of request has no value");
}

// A region served from memory the test owns.
class FakeRegion final : public protocol::SharedMemoryResolver {
 public:
  absl::StatusOr<protocol::SharedMemoryBytes> Resolve(const protocol::SharedMemoryRef& ref,
                                                      std::string_view where) const override {
    if (ref.region != "r" || ref.offset + ref.byte_size > sizeof(bytes)) {
      return absl::InvalidArgumentError(StrCat(where, ": bad region"));
    }
    return protocol::SharedMemoryBytes{const_cast<std::byte*>(bytes) + ref.offset,
                                       static_cast<size_t>(ref.byte_size), nullptr};
  }
  alignas(64) std::byte bytes[64] = {};
};

TEST(GrpcInferCodecTest, SharedMemoryInputsAreRefusedWhenTheFeatureIsOff) {
  auto message = NewRequest();
  auto* input = AddInput(message.get(), "x", "INT32", {1});
  (*input->mutable_parameters())["shared_memory_region"].set_string_param("r");
  (*input->mutable_parameters())["shared_memory_byte_size"].set_int64_param(4);
  ExpectInvalid(Decode(message),
                "input 'x': parameter 'shared_memory_region': system shared "
                "memory is disabled");
}

// As tritonclient sends them: the shared-memory input has no raw_input_contents entry, the other
// input has the only one.
TEST(GrpcInferCodecTest, SharedMemoryInputsAreViewsIntoTheRegion) {
  FakeRegion region;
  const int32_t value = 7;
  std::memcpy(region.bytes + 8, &value, sizeof(value));
  auto message = NewRequest();
  auto* shared = AddInput(message.get(), "x", "INT32", {1});
  (*shared->mutable_parameters())["shared_memory_region"].set_string_param("r");
  (*shared->mutable_parameters())["shared_memory_offset"].set_int64_param(8);
  (*shared->mutable_parameters())["shared_memory_byte_size"].set_uint64_param(4);
  AddInput(message.get(), "z", "INT32", {1});
  message->add_raw_input_contents(std::string(4, '\0'));
  auto request = protocol::grpc::DecodeModelInferRequest(message, 0, &region);
  ASSERT_TRUE(request.ok()) << request.status();
  const InferInput& x = (*request)->inputs[0];
  EXPECT_EQ(x.tensor.data(), region.bytes + 8);  // no copy
  EXPECT_EQ(x.tensor.values<int32_t>()[0], 7);
  EXPECT_FALSE(x.parameters.Contains("shared_memory_region"));
  EXPECT_EQ((*request)->inputs[1].tensor.byte_size(), 4u);

  (*shared->mutable_parameters())["shared_memory_byte_size"].set_uint64_param(8);
  ExpectInvalid(protocol::grpc::DecodeModelInferRequest(message, 0, &region),
                "input 'x': shared_memory_byte_size 8 of region 'r'");
  (*shared->mutable_parameters())["shared_memory_offset"].set_int64_param(64);
  ExpectInvalid(protocol::grpc::DecodeModelInferRequest(message, 0, &region),
                "input 'x': bad region");
}

TEST(GrpcInferCodecTest, SharedMemoryOutputsKeepTheirParametersAndAnswerWithoutData) {
  auto message = NewRequest();
  AddInput(message.get(), "x", "INT32", {1})->mutable_contents()->add_int_contents(1);
  auto* output = message->add_outputs();
  output->set_name("y");
  (*output->mutable_parameters())["shared_memory_region"].set_string_param("r");
  (*output->mutable_parameters())["shared_memory_byte_size"].set_int64_param(64);
  auto request = Decode(message);
  ASSERT_TRUE(request.ok()) << request.status();
  FakeRegion region;
  auto bound = protocol::BindSharedMemoryOutputs(&region, &(*request)->outputs);
  ASSERT_TRUE(bound.ok()) << bound.status();
  ASSERT_EQ(bound->size(), 1u);

  InferResponse response;
  response.outputs.push_back(
      {"y", *Tensor::FromValues<int32_t>({2}, std::vector<int32_t>{5, 6}), {}});
  ASSERT_TRUE(protocol::WriteSharedMemoryOutputs(*bound, response).ok());
  inference::ModelInferResponse encoded;
  ASSERT_TRUE(protocol::grpc::EncodeModelInferResponse(response, &encoded, *bound).ok());
  ASSERT_EQ(encoded.raw_output_contents_size(), 1);
  EXPECT_TRUE(encoded.raw_output_contents(0).empty());
  EXPECT_EQ(encoded.outputs(0).shape_size(), 1);
  int32_t written[2];
  std::memcpy(written, region.bytes, sizeof(written));
  EXPECT_EQ(written[1], 6);
}

// What tritonclient sends for infer(..., sequence_id=5): refused, not answered statelessly; its
// default (no sequence) sends nothing, and explicit "off" values pass.
TEST(GrpcInferCodecTest, SequenceParametersAreRefusedUnlessOff) {
  auto message = NewRequest();
  AddInput(message.get(), "x", "INT32", {1})->mutable_contents()->add_int_contents(1);
  (*message->mutable_parameters())["sequence_id"].set_int64_param(5);
  (*message->mutable_parameters())["sequence_start"].set_bool_param(true);
  auto result = Decode(message);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("request parameter 'sequence_"));

  message = NewRequest();
  AddInput(message.get(), "x", "INT32", {1})->mutable_contents()->add_int_contents(1);
  (*message->mutable_parameters())["sequence_id"].set_int64_param(0);
  (*message->mutable_parameters())["sequence_end"].set_bool_param(false);
  EXPECT_TRUE(Decode(message).ok());
}

TEST(GrpcInferCodecTest, UnknownTritonParametersAreRefused) {
  auto message = NewRequest();
  AddInput(message.get(), "x", "INT32", {1})->mutable_contents()->add_int_contents(1);
  (*message->mutable_parameters())["triton_something_new"].set_bool_param(true);
  ExpectInvalid(Decode(message), "request parameter 'triton_something_new'");
}

TEST(GrpcInferCodecTest, ModelVersionMustBeANonNegativeInteger) {
  EXPECT_EQ(*ParseModelVersion("", "version"), -1);
  EXPECT_EQ(*ParseModelVersion("12", "version"), 12);
  for (const char* bad : {"x", "-1", "1.0", " 1", "99999999999999999999"}) {
    auto result = ParseModelVersion(bad, "model_version");
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("model_version"));
  }
  auto message = NewRequest();
  message->set_model_version("latest");
  ExpectInvalid(Decode(message), "model_version 'latest'");
}

TEST(GrpcInferCodecTest, EncodesResponseWithRawOutputContents) {
  InferResponse response;
  response.model_name = "m";
  response.model_version = "2";
  response.id = "req";
  response.parameters.Set("sequence_end", true);
  const std::vector<float> values = {1.0f, 2.0f, 3.0f, 4.0f};
  response.outputs.push_back({"y", *Tensor::FromValues<float>({2, 2}, values), Parameters()});
  const std::vector<std::string> strings = {"ab", "c"};
  response.outputs.push_back({"s", *Tensor::FromStrings({2}, strings), Parameters()});

  ModelInferResponse out;
  out.set_model_name("stale");  // a reused message is cleared first
  ASSERT_TRUE(EncodeModelInferResponse(response, &out).ok());
  EXPECT_EQ(out.model_name(), "m");
  EXPECT_EQ(out.model_version(), "2");
  EXPECT_EQ(out.id(), "req");
  EXPECT_TRUE(out.parameters().at("sequence_end").bool_param());
  ASSERT_EQ(out.outputs_size(), 2);
  ASSERT_EQ(out.raw_output_contents_size(), 2);
  EXPECT_EQ(out.outputs(0).name(), "y");
  EXPECT_EQ(out.outputs(0).datatype(), "FP32");
  EXPECT_THAT(out.outputs(0).shape(), ElementsAre(2, 2));
  EXPECT_FALSE(out.outputs(0).has_contents());
  EXPECT_EQ(out.raw_output_contents(0), RawBytes<float>(values));
  EXPECT_EQ(out.outputs(1).datatype(), "BYTES");
  std::string serialized;
  AppendSerializedString("ab", &serialized);
  AppendSerializedString("c", &serialized);
  EXPECT_EQ(out.raw_output_contents(1), serialized);
}

TEST(GrpcInferCodecTest, EncodedResponseDecodesAsTheSameTensors) {
  InferResponse response;
  response.model_name = "m";
  const std::vector<int64_t> values = {-1, 0, 1};
  response.outputs.push_back({"y", *Tensor::FromValues<int64_t>({3}, values), Parameters()});
  ModelInferResponse out;
  ASSERT_TRUE(EncodeModelInferResponse(response, &out).ok());

  // Feed the output back as a raw input: the bytes mean the same thing in both directions.
  auto message = NewRequest();
  AddInput(message.get(), out.outputs(0).name(), out.outputs(0).datatype(),
           {out.outputs(0).shape().begin(), out.outputs(0).shape().end()});
  message->add_raw_input_contents(out.raw_output_contents(0));
  auto request = Decode(message);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT((*request)->inputs[0].tensor.values<int64_t>(), ElementsAre(-1, 0, 1));
}

TEST(GrpcInferCodecTest, OutputWithoutTypeIsAnInternalError) {
  InferResponse response;
  response.outputs.push_back({"y", Tensor(), Parameters()});
  ModelInferResponse out;
  EXPECT_EQ(EncodeModelInferResponse(response, &out).code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace brigade::protocol::grpc
