#include "protocol/grpc/extension_messages.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol::grpc {
namespace {

using ::testing::HasSubstr;

TEST(ExtensionMessagesTest, SharedMemoryRegistrationIsCheckedAndStatusKeyedByName) {
  inference::SystemSharedMemoryRegisterRequest request;
  request.set_name("input");
  request.set_key("/input_data");
  request.set_offset(4096);
  request.set_byte_size(602112);
  auto region = DecodeSystemSharedMemoryRegister(request);
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ(*region, (protocol::SharedMemoryRegion{"input", "/input_data", 4096, 602112}));

  request.set_key("/dev/shm/x");
  EXPECT_THAT(std::string(DecodeSystemSharedMemoryRegister(request).status().message()),
              HasSubstr("never a path"));
  request.set_name("");
  EXPECT_EQ(DecodeSystemSharedMemoryRegister(request).status().code(),
            absl::StatusCode::kInvalidArgument);

  inference::SystemSharedMemoryStatusResponse status;
  const protocol::SharedMemoryRegion regions[] = {{"a", "/ka", 0, 16}, {"b", "/kb", 8, 8}};
  EncodeSystemSharedMemoryStatus(regions, &status);
  ASSERT_EQ(status.regions_size(), 2);
  EXPECT_EQ(status.regions().at("b").key(), "/kb");
  EXPECT_EQ(status.regions().at("b").offset(), 8u);
  EXPECT_EQ(status.regions().at("a").byte_size(), 16u);
}

TEST(ExtensionMessagesTest, TraceSettingsInKeyOrderAndEmptyValuesClear) {
  inference::TraceSettingRequest request;
  (*request.mutable_settings())["trace_rate"].add_value("10");
  (*request.mutable_settings())["trace_count"];
  (*request.mutable_settings())["trace_level"].add_value("TIMESTAMPS");
  const protocol::TraceSettingsUpdate update = DecodeTraceSettingRequest(request);
  ASSERT_EQ(update.size(), 3u);
  EXPECT_EQ(update[0], (protocol::TraceSettingChange{"trace_count", std::nullopt}));
  EXPECT_EQ(update[1], (protocol::TraceSettingChange{"trace_level", {{"TIMESTAMPS"}}}));
  EXPECT_EQ(update[2], (protocol::TraceSettingChange{"trace_rate", {{"10"}}}));

  inference::TraceSettingResponse response;
  EncodeTraceSettings({{"trace_level", {"OFF"}}, {"trace_rate", {"1000"}}}, &response);
  EXPECT_EQ(response.settings().at("trace_level").value(0), "OFF");
  EXPECT_EQ(response.settings().at("trace_rate").value_size(), 1);
}

}  // namespace
}  // namespace brigade::protocol::grpc
