#ifndef BRIGADE_SERVER_LOG_CONTROL_H_
#define BRIGADE_SERVER_LOG_CONTROL_H_

// LogControl: Triton's logging extension (GET/POST /v2/logging, gRPC LogSettings) over spdlog's
// default logger, the one every Brigade component logs to.
//
// Triton switches each severity on or off; spdlog has one threshold. So the settings Brigade can
// honour are the thresholds: error ⊂ warning ⊂ info ⊂ verbose. An update that switches a
// severity on while a more severe one is off (log_info true with log_warning false, or
// log_verbose_level > 0 with log_info false) is INVALID_ARGUMENT naming both, rather than a
// level that logs something else. log_verbose_level > 0 means spdlog's debug level. log_format
// "default" is spdlog's default pattern (local time), "ISO8601" an ISO 8601 UTC timestamp. The
// log goes to standard error: a log_file other than "" is UNIMPLEMENTED (redirect the server's
// standard error instead). A refused update changes nothing.
//
// The settings start from spdlog's level when the control is created (the serve command sets it
// from --log-level / --log-verbose first).
//
// Thread safety: safe from any thread; updates are serialised. spdlog's level and pattern are
// process-wide, so a process should have one LogControl that changes them. Failure: Update
// returns the error and leaves the settings as they were.

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "protocol/log_settings.h"

namespace brigade {

class LogControl {
 public:
  LogControl();

  protocol::LogSettings Get() const;
  // The settings after `update` (see the class comment for what is refused).
  absl::StatusOr<protocol::LogSettings> Update(const protocol::LogSettingsUpdate& update);

 private:
  mutable absl::Mutex mu_;
  protocol::LogSettings settings_ ABSL_GUARDED_BY(mu_);
};

}  // namespace brigade

#endif  // BRIGADE_SERVER_LOG_CONTROL_H_
