#include "protocol/shared_memory.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol {
namespace {

using ::testing::HasSubstr;

void ExpectInvalid(const absl::Status& status, std::string_view fragment) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
}

// 64 bytes of memory the test owns, known as region "r".
class FakeRegion final : public SharedMemoryResolver {
 public:
  absl::StatusOr<SharedMemoryBytes> Resolve(const SharedMemoryRef& ref,
                                            std::string_view where) const override {
    if (ref.region != "r") return absl::InvalidArgumentError(StrCat(where, ": unknown"));
    if (ref.offset > sizeof(bytes) || ref.byte_size > sizeof(bytes) - ref.offset) {
      return absl::InvalidArgumentError(StrCat(where, ": past the end"));
    }
    return SharedMemoryBytes{const_cast<std::byte*>(bytes) + ref.offset,
                             static_cast<size_t>(ref.byte_size), nullptr};
  }
  alignas(64) std::byte bytes[64] = {};
};

TEST(SharedMemoryKeyTest, KeysNameAFileInDevShmAndNothingElse) {
  for (std::string_view key : {"/input_data", "input_data", "/a", "/x.y-z_0"}) {
    EXPECT_TRUE(ValidateSharedMemoryKey(key).ok()) << key;
  }
  for (std::string_view key :
       {"", "/", "/a/b", "/../etc/passwd", "/..", "/.", "//a", "/a b", "/a\\b", "/a..b"}) {
    EXPECT_EQ(ValidateSharedMemoryKey(key).code(), absl::StatusCode::kInvalidArgument) << key;
  }
  EXPECT_TRUE(ValidateSharedMemoryKey("/" + std::string(255, 'k')).ok());
  ExpectInvalid(ValidateSharedMemoryKey("/" + std::string(256, 'k')), "256 bytes; at most 255");
}

TEST(SharedMemoryKeyTest, NamesAreBoundedAndPrintable) {
  EXPECT_TRUE(ValidateSharedMemoryName("input region/1").ok());
  ExpectInvalid(ValidateSharedMemoryName(""), "empty");
  ExpectInvalid(ValidateSharedMemoryName(std::string(256, 'n')), "at most 255");
  ExpectInvalid(ValidateSharedMemoryName("a\nb"), "control character");
}

TEST(TakeSharedMemoryRefTest, ReadsAndErasesTheThreeParameters) {
  Parameters parameters;
  parameters.Set("shared_memory_region", std::string("r"));
  parameters.Set("shared_memory_offset", int64_t{8});
  parameters.Set("shared_memory_byte_size", uint64_t{16});
  parameters.Set("custom", true);
  auto ref = TakeSharedMemoryRef(&parameters, "input 'x'");
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_TRUE(ref->has_value());
  EXPECT_EQ((*ref)->region, "r");
  EXPECT_EQ((*ref)->offset, 8u);
  EXPECT_EQ((*ref)->byte_size, 16u);
  EXPECT_EQ(parameters.size(), 1u);

  Parameters none;
  none.Set("custom", true);
  auto absent = TakeSharedMemoryRef(&none, "input 'x'");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
}

TEST(TakeSharedMemoryRefTest, BadValuesAreRefusedNamingTheParameter) {
  auto take = [](auto fill) {
    Parameters parameters;
    fill(parameters);
    return TakeSharedMemoryRef(&parameters, "output 'y'").status();
  };
  ExpectInvalid(take([](Parameters& p) { p.Set("shared_memory_region", int64_t{1}); }),
                "output 'y': parameter 'shared_memory_region' must be a region's name");
  ExpectInvalid(take([](Parameters& p) {
                  p.Set("shared_memory_region", std::string("r"));
                  p.Set("shared_memory_byte_size", int64_t{-4});
                }),
                "parameter 'shared_memory_byte_size' must be a non-negative integer");
  ExpectInvalid(take([](Parameters& p) {
                  p.Set("shared_memory_region", std::string("r"));
                  p.Set("shared_memory_offset", std::string("8"));
                  p.Set("shared_memory_byte_size", int64_t{4});
                }),
                "parameter 'shared_memory_offset' must be a non-negative integer");
  ExpectInvalid(take([](Parameters& p) { p.Set("shared_memory_region", std::string("r")); }),
                "needs a 'shared_memory_byte_size' parameter");
  ExpectInvalid(take([](Parameters& p) { p.Set("shared_memory_offset", int64_t{4}); }),
                "parameter 'shared_memory_offset' needs a 'shared_memory_region' parameter");
}

TEST(SharedMemoryInputTensorTest, AnAlignedInputIsAViewAndAMisalignedOneACopy) {
  FakeRegion region;
  const float values[2] = {1.0f, 2.0f};
  std::memcpy(region.bytes, values, sizeof(values));
  std::memcpy(region.bytes + 33, values, sizeof(values));
  auto view = SharedMemoryInputTensor(&region, {"r", 0, 8}, DataType::kFp32, {2}, "input 'x'");
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), region.bytes);
  auto copy = SharedMemoryInputTensor(&region, {"r", 33, 8}, DataType::kFp32, {2}, "input 'x'");
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_NE(copy->data(), region.bytes + 33);
  EXPECT_EQ(copy->values<float>()[1], 2.0f);
}

TEST(SharedMemoryInputTensorTest, TheByteSizeMustMatchTheShape) {
  FakeRegion region;
  ExpectInvalid(
      SharedMemoryInputTensor(&region, {"r", 0, 12}, DataType::kFp32, {2}, "input 'x'").status(),
      "input 'x': shared_memory_byte_size 12 of region 'r'");
  ExpectInvalid(
      SharedMemoryInputTensor(&region, {"r", 60, 8}, DataType::kFp32, {2}, "input 'x'").status(),
      "input 'x': past the end");
  ExpectInvalid(
      SharedMemoryInputTensor(nullptr, {"r", 0, 8}, DataType::kFp32, {2}, "input 'x'").status(),
      "system shared memory is disabled");
}

TEST(SharedMemoryOutputsTest, BoundOutputsAreWrittenAndChecked) {
  FakeRegion region;
  std::vector<RequestedOutput> outputs(2);
  outputs[0].name = "y";
  outputs[0].parameters.Set("shared_memory_region", std::string("r"));
  outputs[0].parameters.Set("shared_memory_offset", int64_t{4});
  outputs[0].parameters.Set("shared_memory_byte_size", int64_t{8});
  outputs[1].name = "z";
  auto bound = BindSharedMemoryOutputs(&region, &outputs);
  ASSERT_TRUE(bound.ok()) << bound.status();
  ASSERT_EQ(bound->size(), 1u);
  EXPECT_TRUE(outputs[0].parameters.empty());
  EXPECT_TRUE(InSharedMemory(*bound, "y"));
  EXPECT_FALSE(InSharedMemory(*bound, "z"));

  InferResponse response;
  response.outputs.push_back(
      {"y", *Tensor::FromValues<int32_t>({2}, std::vector<int32_t>{3, 4}), {}});
  ASSERT_TRUE(WriteSharedMemoryOutputs(*bound, response).ok());
  int32_t written[2];
  std::memcpy(written, region.bytes + 4, sizeof(written));
  EXPECT_EQ(written[0], 3);
  EXPECT_EQ(written[1], 4);

  response.outputs[0].tensor = *Tensor::FromValues<int32_t>({3}, std::vector<int32_t>{1, 2, 3});
  ExpectInvalid(WriteSharedMemoryOutputs(*bound, response),
                "output 'y' is 12 bytes; its shared_memory_byte_size is 8");
}

TEST(SharedMemoryOutputsTest, OutputsNamingARegionAreRefusedWhenTheFeatureIsOff) {
  std::vector<RequestedOutput> outputs(1);
  outputs[0].name = "y";
  outputs[0].parameters.Set("shared_memory_region", std::string("r"));
  outputs[0].parameters.Set("shared_memory_byte_size", int64_t{8});
  ExpectInvalid(BindSharedMemoryOutputs(nullptr, &outputs).status(),
                "output 'y': parameter 'shared_memory_region': system shared memory is disabled");
  FakeRegion region;
  outputs[0].parameters.Set("shared_memory_region", std::string("other"));
  outputs[0].parameters.Set("shared_memory_byte_size", int64_t{8});
  ExpectInvalid(BindSharedMemoryOutputs(&region, &outputs).status(), "output 'y': unknown");
}

}  // namespace
}  // namespace brigade::protocol
