#ifndef BRIGADE_PROTOCOL_HTTP_LOG_SETTINGS_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_LOG_SETTINGS_JSON_H_

// Bodies of Triton's logging extension (HTTP):
//   GET  /v2/logging                     out: {"log_file": "", "log_info": true, ...}
//   POST /v2/logging  in: any subset of  {"log_file": string, "log_info": bool,
//                                         "log_warning": bool, "log_error": bool,
//                                         "log_verbose_level": uint32, "log_format": string}
//                     out: the settings after the change
// A blank body changes nothing. A field of the wrong type, a verbose level past uint32, an
// unknown field or malformed JSON is INVALID_ARGUMENT naming it. Whether the server can honour
// the values is the server's business, not the codec's.
//
// Pure functions; thread-compatible.

#include <string>

#include "absl/status/statusor.h"
#include "protocol/http/body_buffer.h"
#include "protocol/log_settings.h"

namespace brigade::protocol::http {

absl::StatusOr<protocol::LogSettingsUpdate> DecodeLogSettingsRequest(const BodyBuffer& body);
std::string EncodeLogSettings(const protocol::LogSettings& settings);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_LOG_SETTINGS_JSON_H_
