#ifndef BRIGADE_PROTOCOL_LOG_SETTINGS_H_
#define BRIGADE_PROTOCOL_LOG_SETTINGS_H_

// Triton's logging extension: the server's log settings as GET/POST /v2/logging and gRPC
// LogSettings carry them, and a change a client asks for (each field optional). Plain value
// types shared by the codecs and the server; no behaviour.

#include <cstdint>
#include <optional>
#include <string>

namespace brigade::protocol {

inline constexpr char kLogFormatDefault[] = "default";
inline constexpr char kLogFormatIso8601[] = "ISO8601";

struct LogSettings {
  std::string log_file;  // empty: standard error
  bool log_info = true;
  bool log_warning = true;
  bool log_error = true;
  uint32_t log_verbose_level = 0;  // > 0 logs debug messages too
  std::string log_format = kLogFormatDefault;

  friend bool operator==(const LogSettings&, const LogSettings&) = default;
};

// The `{}` initializers let callers name only the fields they set (designated initializers).
struct LogSettingsUpdate {
  std::optional<std::string> log_file{};
  std::optional<bool> log_info{};
  std::optional<bool> log_warning{};
  std::optional<bool> log_error{};
  std::optional<uint32_t> log_verbose_level{};
  std::optional<std::string> log_format{};
};

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_LOG_SETTINGS_H_
