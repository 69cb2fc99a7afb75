#include "protocol/failure_reason.h"

#include <optional>
#include <string>

#include "absl/strings/cord.h"

namespace brigade::protocol {
namespace {

// Debian's absl::string_view is not std::string_view.
absl::string_view PayloadKey() {
  return absl::string_view(kFailureReasonPayload.data(), kFailureReasonPayload.size());
}

std::optional<FailureReason> MarkedReason(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(PayloadKey());
  if (!payload.has_value()) return std::nullopt;
  const std::string name(*payload);
  for (int i = 0; i < kNumFailureReasons; ++i) {
    const auto reason = static_cast<FailureReason>(i);
    if (FailureReasonName(reason) == name) return reason;
  }
  return std::nullopt;
}

}  // namespace

std::string_view FailureReasonName(FailureReason reason) {
  switch (reason) {
    case FailureReason::kRejected:
      return "REJECTED";
    case FailureReason::kCanceled:
      return "CANCELED";
    case FailureReason::kBackend:
      return "BACKEND";
    case FailureReason::kOther:
      return "OTHER";
  }
  return "OTHER";
}

absl::Status WithFailureReason(absl::Status status, FailureReason reason) {
  if (status.ok()) return status;
  const std::string_view name = FailureReasonName(reason);
  status.SetPayload(PayloadKey(), absl::Cord(absl::string_view(name.data(), name.size())));
  return status;
}

FailureReason FailureReasonOf(const absl::Status& status) {
  if (const std::optional<FailureReason> marked = MarkedReason(status)) return *marked;
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kDeadlineExceeded:
      return FailureReason::kRejected;
    case absl::StatusCode::kCancelled:
      return FailureReason::kCanceled;
    default:
      return FailureReason::kOther;
  }
}

}  // namespace brigade::protocol
