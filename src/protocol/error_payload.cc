#include "protocol/error_payload.h"

#include <algorithm>

#include "absl/strings/cord.h"

namespace brigade::protocol {
namespace {

absl::string_view RetryAfterKey() {
  return absl::string_view(kRetryAfterPayload.data(), kRetryAfterPayload.size());
}

}  // namespace

absl::Status WithRetryAfter(absl::Status status, int64_t seconds) {
  const std::string text = std::to_string(std::max<int64_t>(1, seconds));
  status.SetPayload(RetryAfterKey(), absl::Cord(absl::string_view(text.data(), text.size())));
  return status;
}

std::optional<std::string> RetryAfterSeconds(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kUnavailable) return std::nullopt;
  const absl::optional<absl::Cord> payload = status.GetPayload(RetryAfterKey());
  if (!payload.has_value()) return std::nullopt;
  return std::string(*payload);
}

}  // namespace brigade::protocol
