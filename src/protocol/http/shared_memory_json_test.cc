#include "protocol/http/shared_memory_json.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol::http {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<protocol::SharedMemoryRegion> DecodeRegister(std::string_view name,
                                                            std::string_view body) {
  return DecodeSharedMemoryRegisterRequest(name, *BodyBuffer::FromString(body));
}

void ExpectInvalid(const absl::StatusOr<protocol::SharedMemoryRegion>& result,
                   std::string_view fragment) {
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(fragment));
}

TEST(SharedMemoryJsonTest, RegisterRequestsAsTritonclientSendsThem) {
  auto region = DecodeRegister("input", R"({"key":"/input_data","offset":0,"byte_size":602112})");
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ(*region, (protocol::SharedMemoryRegion{"input", "/input_data", 0, 602112}));
  auto no_offset = DecodeRegister("o", R"({"byte_size":8,"key":"k"})");
  ASSERT_TRUE(no_offset.ok()) << no_offset.status();
  EXPECT_EQ(no_offset->offset, 0u);
}

TEST(SharedMemoryJsonTest, TheClientsRegisterRequestDecodesToTheSameRegion) {
  const protocol::SharedMemoryRegion region{"in", "/brigade-bench-7-0", 64, 602112};
  const std::string body = EncodeSharedMemoryRegisterRequest(region);
  EXPECT_EQ(body, R"({"key":"/brigade-bench-7-0","offset":64,"byte_size":602112})");
  auto decoded = DecodeRegister("in", body);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, region);
}

TEST(SharedMemoryJsonTest, BadRegisterRequestsNameTheField) {
  ExpectInvalid(DecodeRegister("r", R"({"byte_size":8})"), "has no 'key'");
  ExpectInvalid(DecodeRegister("r", R"({"key":"/k"})"), "has no 'byte_size'");
  ExpectInvalid(DecodeRegister("r", R"({"key":"/k","byte_size":-8})"),
                "'byte_size' must be a non-negat");
  ExpectInvalid(DecodeRegister("r", R"({"key":"/k","byte_size":8,"offset":"0"})"),
                "'offset' must be");
  ExpectInvalid(DecodeRegister("r", R"({"key":7,"byte_size":8})"), "'key'");
  ExpectInvalid(DecodeRegister("r", R"({"key":"/k","byte_size":8,"device_id":0})"),
                "unknown field 'device_id'");
  ExpectInvalid(DecodeRegister("r", R"({"key":"/../etc/passwd","byte_size":8})"), "never a path");
  ExpectInvalid(DecodeRegister("", R"({"key":"/k","byte_size":8})"), "region name is empty");
  ExpectInvalid(DecodeRegister("r", "[1]"), "shared memory register request");
}

TEST(SharedMemoryJsonTest, StatusListsEachRegion) {
  const std::vector<protocol::SharedMemoryRegion> regions = {{"a", "/ka", 0, 16},
                                                             {"b", "/kb", 4096, 8}};
  EXPECT_EQ(EncodeSharedMemoryStatus(regions),
            R"([{"name":"a","key":"/ka","offset":0,"byte_size":16},)"
            R"({"name":"b","key":"/kb","offset":4096,"byte_size":8}])");
  EXPECT_EQ(EncodeSharedMemoryStatus({}), "[]");
}

}  // namespace
}  // namespace brigade::protocol::http
