#include "telemetry/access_log.h"

#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/strings.h"
#include "telemetry/fast_random.h"
#include "telemetry/json_text.h"
#include "telemetry/latency_stage.h"
#include "telemetry/request_metrics.h"

namespace brigade::telemetry {

struct AccessLog::Line {
  std::string request_id{};
  std::string model{};
  std::string version{};
  Protocol protocol = Protocol::kHttp;
  absl::Status status{};
  std::optional<int> protocol_code{};
  int batch_size = 0;
  bool cache_hit = false;
  std::optional<TraceId> trace_id{};
  StageClock clock{};
};

namespace {

// "2024-05-01T12:00:00.123456Z"
std::string FormatUtc(int64_t unix_ns) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:06d}Z", date, (unix_ns % 1'000'000'000) / 1000);
}

void AppendField(std::string_view key, std::string* out) {
  out->push_back(',');
  AppendJsonString(key, out);
  out->push_back(':');
}

std::string Format(const AccessLogEntry& entry, int64_t wall_offset_ns) {
  int64_t start_ns = entry.clock.at(Stage::kArrival);
  for (int i = 0; start_ns == 0 && i < kNumStages; ++i) start_ns = entry.clock.at(Stage(i));
  const int64_t time_ns = start_ns != 0 ? start_ns + wall_offset_ns : WallNowNs();

  std::string out;
  out.reserve(384);
  out.append("{\"time\":");
  AppendJsonString(FormatUtc(time_ns), &out);
  AppendField("request_id", &out);
  AppendJsonString(entry.request_id, &out);
  AppendField("model", &out);
  AppendJsonString(entry.model, &out);
  AppendField("version", &out);
  AppendJsonString(entry.version, &out);
  AppendField("protocol", &out);
  AppendJsonString(ProtocolName(entry.protocol), &out);
  AppendField("status", &out);
  AppendJsonString(absl::StatusCodeToString(entry.status.code()), &out);
  if (!entry.status.ok()) {
    AppendField("message", &out);
    AppendJsonString(ToStd(entry.status.message()), &out);
  }
  if (entry.protocol_code.has_value()) {
    AppendField("code", &out);
    fmt::format_to(std::back_inserter(out), "{}", *entry.protocol_code);
  }
  AppendField("outcome", &out);
  AppendJsonString(RequestOutcomeName(OutcomeFromStatus(entry.status)), &out);
  if (entry.batch_size > 0) {
    AppendField("batch_size", &out);
    fmt::format_to(std::back_inserter(out), "{}", entry.batch_size);
  }
  AppendField("cache_hit", &out);
  out.append(entry.cache_hit ? "true" : "false");
  if (entry.trace_id.has_value()) {
    AppendField("trace_id", &out);
    AppendJsonString(entry.trace_id->Hex(), &out);
  }
  for (int i = 0; i < kNumLatencyStages; ++i) {
    const auto stage = static_cast<LatencyStage>(i);
    const std::optional<int64_t> ns = LatencyStageNs(entry.clock, stage);
    if (!ns.has_value()) continue;
    AppendField(StrCat(LatencyStageName(stage), "_us"), &out);
    AppendJsonNumber(static_cast<double>(*ns) / 1000.0, &out);
  }
  out.push_back('}');
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AccessLog>> AccessLog::Create(Options options) {
  if (options.path.empty()) return absl::InvalidArgumentError("access log: empty path");
  if (!(options.sample_rate >= 0.0 && options.sample_rate <= 1.0)) {
    return absl::InvalidArgumentError(
        StrCat("access log: sample_rate must be within [0, 1], got ", options.sample_rate));
  }
  if (options.clock == nullptr) return absl::InvalidArgumentError("access log: no clock");
  std::FILE* file = std::fopen(options.path.c_str(), "a");
  if (file == nullptr) {
    return absl::UnavailableError(
        StrCat("access log ", options.path, ": cannot open for append: ", std::strerror(errno)));
  }
  const int64_t offset = options.wall_offset_ns.has_value() ? *options.wall_offset_ns
                                                            : WallNowNs() - options.clock->NowNs();
  return std::make_unique<AccessLog>(std::move(options), file, offset);
}

AccessLog::AccessLog(Options options, std::FILE* file, int64_t wall_offset_ns)
    : options_(std::move(options)),
      file_(file),
      wall_offset_ns_(wall_offset_ns),
      worker_(std::make_unique<AsyncBatchWorker<Line>>(
          AsyncBatchWorker<Line>::Options{.capacity = options_.max_queued_lines,
                                          .max_batch = 256,
                                          .max_delay = options_.flush_interval},
          [this](std::vector<Line> lines) { Write(std::move(lines)); })) {}

AccessLog::~AccessLog() {
  worker_.reset();  // writes what is queued, joins
  std::fclose(file_);
}

bool AccessLog::Record(const AccessLogEntry& entry) {
  const bool forced = options_.log_errors && !entry.status.ok();
  if (!forced && !ThreadRandomChance(options_.sample_rate)) return false;
  return worker_->TryPush(Line{
      .request_id = std::string(entry.request_id),
      .model = std::string(entry.model),
      .version = std::string(entry.version),
      .protocol = entry.protocol,
      .status = entry.status,
      .protocol_code = entry.protocol_code,
      .batch_size = entry.batch_size,
      .cache_hit = entry.cache_hit,
      .trace_id = entry.trace_id,
      .clock = entry.clock,
  });
}

bool AccessLog::Flush(absl::Duration timeout) { return worker_->Flush(timeout); }

uint64_t AccessLog::dropped_lines() const { return worker_->dropped(); }

std::string AccessLog::FormatLine(const AccessLogEntry& entry, int64_t wall_offset_ns) {
  return Format(entry, wall_offset_ns);
}

void AccessLog::Write(std::vector<Line> lines) {
  std::string text;
  for (const Line& line : lines) {
    text.append(Format(AccessLogEntry{.request_id = line.request_id,
                                      .model = line.model,
                                      .version = line.version,
                                      .protocol = line.protocol,
                                      .status = line.status,
                                      .protocol_code = line.protocol_code,
                                      .batch_size = line.batch_size,
                                      .cache_hit = line.cache_hit,
                                      .trace_id = line.trace_id,
                                      .clock = line.clock},
                       wall_offset_ns_));
    text.push_back('\n');
  }
  if (std::fwrite(text.data(), 1, text.size(), file_) == text.size() && std::fflush(file_) == 0) {
    written_.fetch_add(lines.size(), std::memory_order_relaxed);
  } else {
    write_errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace brigade::telemetry
