#include "telemetry/trace_file_exporter.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

std::filesystem::path TempPath(std::string_view name) {
  return std::filesystem::temp_directory_path() /
         (std::string(name) + "_" + std::to_string(::getpid()) + ".jsonl");
}

TEST(TraceFileExporterTest, AppendsOneOtlpRequestPerBatchPerLine) {
  const std::filesystem::path path = TempPath("brigade_trace_file");
  std::filesystem::remove(path);
  {
    auto exporter = *TraceFileExporter::Create(path.string(), OtlpResource());
    const SpanData first[] = {SpanData{.trace_id = NewTraceId(), .name = "a"},
                              SpanData{.trace_id = NewTraceId(), .name = "b"}};
    const SpanData second[] = {SpanData{.trace_id = NewTraceId(), .name = "c"}};
    ASSERT_TRUE(exporter->Export(first).ok());
    ASSERT_TRUE(exporter->Export(second).ok());
    ASSERT_TRUE(exporter->Export({}).ok());  // nothing to write
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], testing::StartsWith("{\"resourceSpans\":["));
  EXPECT_THAT(lines[0], testing::HasSubstr("\"name\":\"b\""));
  EXPECT_THAT(lines[1], testing::HasSubstr("\"name\":\"c\""));
  std::filesystem::remove(path);
}

TEST(TraceFileExporterTest, UnwritablePathIsUnavailable) {
  EXPECT_EQ(TraceFileExporter::Create("/nonexistent-dir/x.jsonl", OtlpResource()).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(TraceFileExporter::Create("", OtlpResource()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brigade::telemetry
