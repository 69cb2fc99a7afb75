#include "telemetry/json_text.h"

#include <cmath>

#include "core/json_text.h"

namespace brigade::telemetry {

void AppendJsonString(std::string_view text, std::string* out) {
  size_t valid_bytes = ValidUtf8PrefixLength(text);
  if (valid_bytes == text.size()) {
    brigade::AppendJsonString(text, out);
    return;
  }
  // Rare: rebuild the text with U+FFFD in place of each byte that starts no valid sequence.
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string repaired;
  repaired.reserve(text.size() + 2 * kReplacement.size());
  for (;;) {
    repaired.append(text.substr(0, valid_bytes));
    if (valid_bytes == text.size()) break;
    repaired.append(kReplacement);
    text.remove_prefix(valid_bytes + 1);
    valid_bytes = ValidUtf8PrefixLength(text);
  }
  brigade::AppendJsonString(repaired, out);
}

void AppendJsonNumber(double value, std::string* out) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  AppendJsonDouble(value, out);
}

}  // namespace brigade::telemetry
