#include "server/log_control.h"

#include "core/strings.h"
#include "spdlog/spdlog.h"

namespace brigade {
namespace {

// spdlog's default pattern, spelled out so "default" restores it after "ISO8601".
constexpr char kDefaultPattern[] = "%+";
constexpr char kIso8601Pattern[] = "%Y-%m-%dT%H:%M:%S.%fZ [%l] %v";

protocol::LogSettings FromLevel(spdlog::level::level_enum level) {
  protocol::LogSettings settings;
  settings.log_verbose_level = level <= spdlog::level::debug ? 1 : 0;
  settings.log_info = level <= spdlog::level::info;
  settings.log_warning = level <= spdlog::level::warn;
  settings.log_error = level <= spdlog::level::err;
  return settings;
}

absl::StatusOr<spdlog::level::level_enum> ToLevel(const protocol::LogSettings& settings) {
  // Each switch that is on needs every more severe one on: that is a threshold.
  const struct {
    bool on;
    const char* name;
    bool more_severe_on;
    const char* more_severe;
  } pairs[] = {
      {settings.log_verbose_level > 0, "log_verbose_level > 0", settings.log_info, "log_info"},
      {settings.log_info, "log_info", settings.log_warning, "log_warning"},
      {settings.log_warning, "log_warning", settings.log_error, "log_error"},
  };
  for (const auto& pair : pairs) {
    if (pair.on && !pair.more_severe_on) {
      return absl::InvalidArgumentError(
          StrCat("log settings: ", pair.name, " with ", pair.more_severe,
                 " off: Brigade's log has one severity threshold, so a severity is logged only "
                 "with every more severe one"));
    }
  }
  if (settings.log_verbose_level > 0) return spdlog::level::debug;
  if (settings.log_info) return spdlog::level::info;
  if (settings.log_warning) return spdlog::level::warn;
  if (settings.log_error) return spdlog::level::err;
  return spdlog::level::off;
}

}  // namespace

LogControl::LogControl() : settings_(FromLevel(spdlog::get_level())) {}

protocol::LogSettings LogControl::Get() const {
  absl::MutexLock lock(&mu_);
  return settings_;
}

absl::StatusOr<protocol::LogSettings> LogControl::Update(
    const protocol::LogSettingsUpdate& update) {
  absl::MutexLock lock(&mu_);
  protocol::LogSettings next = settings_;
  if (update.log_file) next.log_file = *update.log_file;
  if (update.log_info) next.log_info = *update.log_info;
  if (update.log_warning) next.log_warning = *update.log_warning;
  if (update.log_error) next.log_error = *update.log_error;
  if (update.log_verbose_level) next.log_verbose_level = *update.log_verbose_level;
  if (update.log_format) next.log_format = *update.log_format;
  if (!next.log_file.empty()) {
    return absl::UnimplementedError(
        StrCat("log settings: log_file '", next.log_file,
               "': Brigade logs to standard error; redirect it to write a file"));
  }
  if (next.log_format != protocol::kLogFormatDefault &&
      next.log_format != protocol::kLogFormatIso8601) {
    return absl::InvalidArgumentError(StrCat("log settings: log_format '", next.log_format,
                                             "' is neither 'default' nor 'ISO8601'"));
  }
  absl::StatusOr<spdlog::level::level_enum> level = ToLevel(next);
  if (!level.ok()) return level.status();
  // spdlog's calls lock their own state and do no I/O: safe under mu_, which keeps a concurrent
  // update from interleaving its level with this one's pattern.
  spdlog::set_level(*level);
  if (next.log_format != settings_.log_format) {
    if (next.log_format == protocol::kLogFormatIso8601) {
      spdlog::set_pattern(kIso8601Pattern, spdlog::pattern_time_type::utc);
    } else {
      spdlog::set_pattern(kDefaultPattern);
    }
  }
  settings_ = next;
  return settings_;
}

}  // namespace brigade
