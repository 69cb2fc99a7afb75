#ifndef BRIGADE_CORE_HTTP_TOKENS_H_
#define BRIGADE_CORE_HTTP_TOKENS_H_

// HTTP's text rules, shared by the server's transport, the protocol's codecs and net's client
// and test server: header names and tokens compare ASCII case-insensitively (locale-free), and
// values carry optional whitespace (spaces and tabs, RFC 9110 §5.6.3) around them.

#include <cstddef>
#include <string_view>

namespace brigade {

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// `text` without the spaces and tabs around it.
inline std::string_view TrimHttpWhitespace(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace brigade

#endif  // BRIGADE_CORE_HTTP_TOKENS_H_
