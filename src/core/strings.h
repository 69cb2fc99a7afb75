#ifndef BRIGADE_CORE_STRINGS_H_
#define BRIGADE_CORE_STRINGS_H_

// String helpers shared by every component.
//
// Why not absl::StrCat / absl::SimpleAtoi: Debian's absl is built with its own absl::string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW 0), which does not accept std::string_view, so every absl
// string function would need a conversion at each call. Brigade uses std::string_view throughout
// with StrCat below (built on fmt) or fmt::format; this header lets fmt print absl::string_view
// (e.g. Status::message()) and parses numbers with std::from_chars.

#include <charconv>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/string_view.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(absl::string_view value, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(value.data(), value.size()),
                                                    ctx);
  }
};

namespace brigade {

// Concatenates the text form of each argument (strings, string views of either kind, numbers,
// anything fmt can print): the absl::StrCat of this project.
template <typename... Args>
std::string StrCat(Args&&... args) {
  std::string out;
  (fmt::format_to(std::back_inserter(out), "{}", std::forward<Args>(args)), ...);
  return out;
}

inline std::string_view ToStd(absl::string_view value) { return {value.data(), value.size()}; }

// Parses the whole of `text` as a base-10 integer; false on any junk, sign misuse or overflow.
template <typename Int>
bool ParseInteger(std::string_view text, Int* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// Parses the whole of `text` as a floating-point number.
inline bool ParseDouble(std::string_view text, double* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace brigade

#endif  // BRIGADE_CORE_STRINGS_H_
