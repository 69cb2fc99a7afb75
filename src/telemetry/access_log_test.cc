#include "telemetry/access_log.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::filesystem::path TempPath(std::string_view name) {
  return std::filesystem::temp_directory_path() /
         (std::string(name) + "_" + std::to_string(::getpid()) + ".jsonl");
}

std::vector<std::string> ReadLines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

StageClock Clock(int64_t t0_ns) {
  StageClock clock;
  clock.Mark(Stage::kArrival, t0_ns);
  clock.Mark(Stage::kDecoded, t0_ns + 12'500);
  clock.Mark(Stage::kPreprocessed, t0_ns + 15'000);
  clock.Mark(Stage::kSent, t0_ns + 40'000);
  return clock;
}

TEST(AccessLogTest, FormatsOneJsonObjectWithStageDurationsInMicroseconds) {
  AccessLogEntry entry{.request_id = "r\"1",
                       .model = "resnet",
                       .version = "2",
                       .protocol = Protocol::kGrpc,
                       .status = absl::OkStatus(),
                       .protocol_code = 0,
                       .cache_hit = true,
                       .clock = Clock(1'000)};
  // t0 + offset = 2024-05-01T12:00:00.000001Z.
  const std::string line = AccessLog::FormatLine(entry, 1'714'564'800'000'000'000 - 1'000 + 1'000);
  EXPECT_EQ(line,
            "{\"time\":\"2024-05-01T12:00:00.000001Z\",\"request_id\":\"r\\\"1\",\"model\":"
            "\"resnet\",\"version\":\"2\",\"protocol\":\"grpc\",\"status\":\"OK\",\"code\":0,"
            "\"outcome\":\"success\",\"cache_hit\":true,\"receive_us\":12.5,"
            "\"preprocess_us\":2.5,\"total_us\":40}");
}

TEST(AccessLogTest, ErrorsCarryMessageAndOutcome) {
  AccessLogEntry entry{.status = absl::DeadlineExceededError("late"), .clock = Clock(1)};
  const std::string line = AccessLog::FormatLine(entry, 0);
  EXPECT_THAT(line, HasSubstr("\"status\":\"DEADLINE_EXCEEDED\",\"message\":\"late\""));
  EXPECT_THAT(line, HasSubstr("\"outcome\":\"timed_out\""));
}

TEST(AccessLogTest, WritesSampledLinesAndAlwaysErrors) {
  const std::filesystem::path path = TempPath("brigade_access_log");
  std::filesystem::remove(path);
  {
    auto log = *AccessLog::Create({.path = path.string(), .sample_rate = 0.0});
    EXPECT_FALSE(log->Record({.request_id = "ok", .clock = Clock(5)}));
    EXPECT_TRUE(log->Record(
        {.request_id = "bad", .status = absl::UnavailableError("full"), .clock = Clock(5)}));
    ASSERT_TRUE(log->Flush(absl::Seconds(10)));
    EXPECT_EQ(log->written_lines(), 1u);
  }
  const std::vector<std::string> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("\"request_id\":\"bad\""));
  EXPECT_THAT(lines[0], Not(HasSubstr("\"request_id\":\"ok\"")));
  std::filesystem::remove(path);
}

TEST(AccessLogTest, FullQueueDropsInsteadOfBlocking) {
  const std::filesystem::path path = TempPath("brigade_access_log_full");
  std::filesystem::remove(path);
  auto log = *AccessLog::Create(
      {.path = path.string(), .max_queued_lines = 1, .flush_interval = absl::Seconds(60)});
  int accepted = 0;
  for (int i = 0; i < 1000; ++i) accepted += log->Record({.request_id = "x", .clock = Clock(5)});
  ASSERT_TRUE(log->Flush(absl::Seconds(10)));
  EXPECT_EQ(static_cast<uint64_t>(accepted), log->written_lines());
  EXPECT_EQ(log->dropped_lines() + log->written_lines(), 1000u);
  EXPECT_GT(log->dropped_lines(), 0u);
  log.reset();
  EXPECT_EQ(ReadLines(path).size(), static_cast<size_t>(accepted));
  std::filesystem::remove(path);
}

TEST(AccessLogTest, CreateValidatesOptions) {
  EXPECT_FALSE(AccessLog::Create({.path = ""}).ok());
  EXPECT_FALSE(AccessLog::Create({.path = "/tmp/x", .sample_rate = 2}).ok());
  EXPECT_EQ(AccessLog::Create({.path = "/nonexistent-dir/log"}).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace brigade::telemetry
