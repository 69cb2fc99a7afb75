#include "protocol/model_version.h"

#include "absl/status/status.h"
#include "core/strings.h"

namespace brigade::protocol {

absl::StatusOr<int64_t> ParseModelVersion(std::string_view version, std::string_view field) {
  if (version.empty()) return -1;
  int64_t parsed = 0;
  if (!ParseInteger(version, &parsed) || parsed < 0) {
    return absl::InvalidArgumentError(
        StrCat(field, " '", version, "' is not a non-negative integer"));
  }
  return parsed;
}

}  // namespace brigade::protocol
