#ifndef BRIGADE_PROTOCOL_ERROR_PAYLOAD_H_
#define BRIGADE_PROTOCOL_ERROR_PAYLOAD_H_

// Error payloads: structured details an absl::Status carries from the component that refuses a
// request to the front end that answers it, so neither has to know the other.
//
//   retry-after  an UNAVAILABLE refusal (a full queue, an SLO that cannot be met, a busy admin
//                worker) suggests when to try again, in whole seconds; HTTP sends it as
//                `Retry-After`, gRPC as `retry-after` trailing metadata.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace brigade::protocol {

// The payload key (decimal seconds as text).
inline constexpr std::string_view kRetryAfterPayload = "brigade/retry-after-seconds";

// `status` with a retry-after of `seconds` (at least 1).
absl::Status WithRetryAfter(absl::Status status, int64_t seconds);

// The retry-after text an UNAVAILABLE status carries; nullopt for any other status or none.
std::optional<std::string> RetryAfterSeconds(const absl::Status& status);

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_ERROR_PAYLOAD_H_
