#ifndef BRIGADE_PROTOCOL_FAILURE_REASON_H_
#define BRIGADE_PROTOCOL_FAILURE_REASON_H_

// FailureReason: why a failed inference request failed, in Triton's four categories (the `reason`
// label of nv_inference_request_failure, Triton 2.4x+):
//
//   REJECTED  the scheduler refused or timed the request out: queue or priority level full,
//             load shedding (predicted late), deadline passed before or while queued, the model
//             version draining or unloading — UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED.
//             (Triton's REJECTED is its scheduler's queue timeout; Brigade's scheduler refuses and
//             times out requests in more ways, all counted here, as brigade_requests_total counts
//             them under rejected / shed / timed_out.)
//   CANCELED  the client cancelled or went away (CANCELLED).
//   BACKEND   the model's Execute failed, or what it returned broke its signature. Only the
//             code that runs the backend knows this: it marks the status (WithFailureReason).
//   OTHER     everything else: requests that failed validation, a bad cache_control, batching or
//             slicing errors in the core.
//
// A status carries an explicit reason as a payload (kFailureReasonPayload); FailureReasonOf reads
// it first and falls back to the status code as above. Pure functions; thread-safe.

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace brigade::protocol {

enum class FailureReason : uint8_t { kRejected = 0, kCanceled, kBackend, kOther };
inline constexpr int kNumFailureReasons = 4;

// Triton's spelling: "REJECTED", "CANCELED", "BACKEND", "OTHER".
std::string_view FailureReasonName(FailureReason reason);

// Payload key under which a status carries its FailureReason's name.
inline constexpr std::string_view kFailureReasonPayload = "brigade/failure-reason";

// `status` (an error) marked with `reason`; an OK status is returned unchanged.
absl::Status WithFailureReason(absl::Status status, FailureReason reason);

// The reason of a failed request's status: the marked one, else by code (see above).
FailureReason FailureReasonOf(const absl::Status& status);

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_FAILURE_REASON_H_
