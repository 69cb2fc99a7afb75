#include "tools/loadgen/shared_memory_inputs.h"

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/shared_memory.h"

namespace brigade::loadgen {
namespace {

using ::testing::HasSubstr;

InferInput Floats(std::string name, Shape shape, std::vector<float> values) {
  return {.name = std::move(name),
          .tensor = *Tensor::FromValues<float>(std::move(shape), values),
          .parameters = {}};
}

client::InferSpec Spec(std::vector<InferInput> inputs) {
  client::InferSpec spec;
  spec.model_name = "m";
  spec.inputs = std::move(inputs);
  return spec;
}

TEST(LayOutSharedMemoryTest, EveryTensorStartsAlignedAndTheRegionHoldsThemAll) {
  const std::vector<client::InferSpec> specs = {
      Spec({Floats("a", {3}, {1, 2, 3}), Floats("b", {20}, std::vector<float>(20, 0.5f))}),
      Spec({Floats("a", {1}, {4}), Floats("b", {1}, {5})})};
  absl::StatusOr<SharedMemoryLayout> layout = LayOutSharedMemory(specs);
  ASSERT_TRUE(layout.ok()) << layout.status();
  // 12 bytes at 0, 80 at 64, then the second request's 4 + 4 at 192 and 256.
  EXPECT_EQ(layout->offsets, (std::vector<std::vector<uint64_t>>{{0, 64}, {192, 256}}));
  EXPECT_EQ(layout->byte_size, 260u);
}

TEST(LayOutSharedMemoryTest, BytesInputsAreRefusedNamingTheInput) {
  const std::vector<client::InferSpec> specs = {
      Spec({{.name = "text",
             .tensor = *Tensor::FromStrings({1}, std::vector<std::string>{"x"}),
             .parameters = {}}})};
  absl::Status status = LayOutSharedMemory(specs).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("input 'text' is BYTES"));
}

TEST(PlaceInSharedMemoryTest, InputsBecomeViewsOfTheRegionWithTheirReference) {
  std::vector<InferInput> inputs = {Floats("a", {2}, {1.5f, -2.0f}), Floats("b", {1}, {7.0f})};
  inputs[1].parameters.Set("custom", std::string("kept"));
  std::vector<std::byte> region(128);
  auto owner = std::make_shared<int>(0);
  const std::vector<uint64_t> offsets = {0, 64};
  absl::StatusOr<std::vector<InferInput>> placed =
      PlaceInSharedMemory(inputs, offsets, "r1", region, owner);
  ASSERT_TRUE(placed.ok()) << placed.status();
  ASSERT_EQ(placed->size(), 2u);
  const InferInput& b = (*placed)[1];
  EXPECT_EQ(b.name, "b");
  EXPECT_EQ(b.tensor.data(), region.data() + 64);
  EXPECT_EQ(b.tensor.shape(), (Shape{1}));
  EXPECT_EQ(b.tensor.dtype(), DataType::kFp32);
  float value = 0;
  std::memcpy(&value, region.data() + 64, 4);
  EXPECT_EQ(value, 7.0f);
  EXPECT_EQ(b.parameters.GetString("custom"), "kept");
  EXPECT_EQ(b.parameters.GetString(protocol::kSharedMemoryRegionParameter), "r1");
  EXPECT_EQ(b.parameters.GetInt(protocol::kSharedMemoryOffsetParameter), 64);
  EXPECT_EQ(b.parameters.GetInt(protocol::kSharedMemoryByteSizeParameter), 4);
  EXPECT_EQ((*placed)[0].parameters.GetInt(protocol::kSharedMemoryByteSizeParameter), 8);
  // The views hold the region's owner.
  EXPECT_EQ(owner.use_count(), 3);
}

TEST(PlaceInSharedMemoryTest, AnInputPastTheRegionsEndIsRefused) {
  const std::vector<InferInput> inputs = {Floats("a", {4}, {1, 2, 3, 4})};
  std::vector<std::byte> region(64);
  const std::vector<uint64_t> offsets = {56};
  absl::Status status = PlaceInSharedMemory(inputs, offsets, "r", region, nullptr).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("input 'a' (16 bytes at offset 56)"));
}

TEST(ShmObjectTest, CreatesAMappedObjectRefusesItsKeyTwiceAndUnlinksIt) {
  const std::string key = StrCat("/brigade-shm-inputs-test-", getpid());
  const std::string path = StrCat("/dev/shm", key);
  {
    absl::StatusOr<std::unique_ptr<ShmObject>> object = ShmObject::Create(key, 4096);
    ASSERT_TRUE(object.ok()) << object.status();
    EXPECT_EQ((*object)->bytes().size(), 4096u);
    (*object)->bytes()[4095] = std::byte{42};
    EXPECT_EQ(access(path.c_str(), F_OK), 0);
    absl::Status again = ShmObject::Create(key, 4096).status();
    EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
    EXPECT_THAT(std::string(again.message()), HasSubstr(key));
    (*object)->Unlink();
    EXPECT_NE(access(path.c_str(), F_OK), 0);
    // The mapping outlives the name.
    EXPECT_EQ((*object)->bytes()[4095], std::byte{42});
  }
  {
    absl::StatusOr<std::unique_ptr<ShmObject>> object = ShmObject::Create(key, 64);
    ASSERT_TRUE(object.ok()) << object.status();
  }
  EXPECT_NE(access(path.c_str(), F_OK), 0);  // the destructor unlinked it
}

}  // namespace
}  // namespace brigade::loadgen
