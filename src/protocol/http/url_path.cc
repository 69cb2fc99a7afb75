#include "protocol/http/url_path.h"

namespace brigade::protocol::http {
namespace {

bool IsUnreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

}  // namespace

void AppendPercentEncoded(std::string_view segment, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char c : segment) {
    if (IsUnreserved(c)) {
      out->push_back(c);
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out->push_back('%');
      out->push_back(kHex[byte >> 4]);
      out->push_back(kHex[byte & 0xf]);
    }
  }
}

void AppendModelPath(std::string_view model, std::string_view version, std::string_view suffix,
                     std::string* out) {
  out->append("/v2/models/");
  AppendPercentEncoded(model, out);
  if (!version.empty()) {
    out->append("/versions/");
    AppendPercentEncoded(version, out);
  }
  out->append(suffix);
}

}  // namespace brigade::protocol::http
