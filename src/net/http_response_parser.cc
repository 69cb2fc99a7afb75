#include "net/http_response_parser.h"

#include <charconv>
#include <cstring>

#include "core/http_tokens.h"
#include "core/strings.h"

namespace brigade::net {
namespace {

// True when the comma-separated header value lists `token` (case-insensitive).
bool HasToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    if (EqualsIgnoreCase(TrimHttpWhitespace(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

absl::Status Malformed(std::string_view what) {
  return absl::InternalError(StrCat("malformed HTTP response: ", what));
}

absl::StatusOr<size_t> ParseLength(std::string_view name, std::string_view value) {
  size_t length = 0;
  if (!ParseInteger(TrimHttpWhitespace(value), &length)) {
    return Malformed(StrCat(name, " is not a number: '", value, "'"));
  }
  return length;
}

}  // namespace

bool StatusHasNoBody(int status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

absl::StatusOr<bool> ParseHttpResponseHead(std::string_view bytes, HttpResponseHead* head,
                                           size_t max_head_bytes) {
  const size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (bytes.size() > max_head_bytes) {
      return Malformed(StrCat("head longer than ", max_head_bytes, " bytes"));
    }
    return false;
  }
  *head = HttpResponseHead();
  head->head_bytes = end + 4;
  std::string_view text = bytes.substr(0, end + 2);

  // Status line: HTTP/1.x SP 3DIGIT [SP reason]
  const size_t line_end = text.find("\r\n");
  const std::string_view status_line = text.substr(0, line_end);
  text.remove_prefix(line_end + 2);
  if (status_line.size() < 12 || !status_line.starts_with("HTTP/1.") || status_line[8] != ' ') {
    return Malformed(StrCat("bad status line '", status_line.substr(0, 64), "'"));
  }
  const bool http10 = status_line[7] == '0';
  if (!ParseInteger(status_line.substr(9, 3), &head->status) || head->status < 100 ||
      head->status > 999) {
    return Malformed(StrCat("bad status code in '", status_line.substr(0, 64), "'"));
  }
  bool keep_alive_token = false;
  head->close = http10;

  while (!text.empty()) {
    const size_t eol = text.find("\r\n");
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Malformed(StrCat("bad header line '", line.substr(0, 64), "'"));
    }
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = TrimHttpWhitespace(line.substr(colon + 1));
    if (EqualsIgnoreCase(name, "content-length")) {
      absl::StatusOr<size_t> length = ParseLength(name, value);
      if (!length.ok()) return length.status();
      if (head->content_length.has_value() && *head->content_length != *length) {
        return Malformed("conflicting Content-Length headers");
      }
      head->content_length = *length;
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      head->chunked = HasToken(value, "chunked");
    } else if (EqualsIgnoreCase(name, "connection")) {
      if (HasToken(value, "close")) head->close = true;
      if (HasToken(value, "keep-alive")) keep_alive_token = true;
    } else if (EqualsIgnoreCase(name, "inference-header-content-length")) {
      absl::StatusOr<size_t> length = ParseLength(name, value);
      if (!length.ok()) return length.status();
      head->inference_header_length = *length;
    } else if (EqualsIgnoreCase(name, "retry-after")) {
      int64_t seconds = 0;
      if (ParseInteger(value, &seconds) && seconds >= 0) head->retry_after_seconds = seconds;
    }
  }
  if (http10 && keep_alive_token) head->close = false;
  // A chunked body's length is in the chunks (RFC 9112 §6.3: Transfer-Encoding wins).
  if (head->chunked) head->content_length.reset();
  return true;
}

void ForEachHttpHeader(std::string_view head,
                       absl::FunctionRef<void(std::string_view, std::string_view)> visit) {
  size_t eol = head.find("\r\n");
  while (eol != std::string_view::npos) {
    head.remove_prefix(eol + 2);
    eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    const size_t colon = line.find(':');
    if (line.empty() || colon == std::string_view::npos) continue;
    visit(line.substr(0, colon), TrimHttpWhitespace(line.substr(colon + 1)));
  }
}

absl::StatusOr<std::optional<ChunkedBody>> DecodeChunkedInPlace(char* data, size_t size_bytes) {
  const std::string_view raw(data, size_bytes);
  // First pass: find every chunk without moving anything, so an incomplete body leaves the
  // buffer untouched for the next attempt.
  size_t pos = 0;
  size_t decoded = 0;
  size_t chunk_count = 0;
  while (true) {
    const size_t eol = raw.find("\r\n", pos);
    if (eol == std::string_view::npos) return std::nullopt;
    std::string_view size_text = raw.substr(pos, eol - pos);
    const size_t semicolon = size_text.find(';');  // chunk extensions are ignored
    size_text = TrimHttpWhitespace(size_text.substr(0, semicolon));
    size_t length = 0;
    const auto [ptr, ec] =
        std::from_chars(size_text.data(), size_text.data() + size_text.size(), length, 16);
    if (ec != std::errc() || ptr != size_text.data() + size_text.size() || size_text.empty()) {
      return Malformed(StrCat("bad chunk size '", size_text.substr(0, 32), "'"));
    }
    pos = eol + 2;
    if (length == 0) break;
    if (raw.size() < pos + length + 2) return std::nullopt;
    if (raw.substr(pos + length, 2) != "\r\n") return Malformed("chunk not followed by CRLF");
    decoded += length;
    pos += length + 2;
    ++chunk_count;
  }
  // Trailers: header lines until an empty line.
  while (true) {
    const size_t eol = raw.find("\r\n", pos);
    if (eol == std::string_view::npos) return std::nullopt;
    const bool empty_line = eol == pos;
    pos = eol + 2;
    if (empty_line) break;
  }
  const size_t consumed = pos;

  // Second pass: move each chunk's data down to its place in the decoded body. Writes stay below
  // the next chunk's size line, so reading the sizes again is safe.
  size_t read = 0;
  size_t write = 0;
  for (size_t i = 0; i < chunk_count; ++i) {
    const size_t eol = raw.find("\r\n", read);
    std::string_view size_text = raw.substr(read, eol - read);
    size_text = TrimHttpWhitespace(size_text.substr(0, size_text.find(';')));
    size_t length = 0;
    std::from_chars(size_text.data(), size_text.data() + size_text.size(), length, 16);
    read = eol + 2;
    std::memmove(data + write, data + read, length);
    write += length;
    read += length + 2;
  }
  return ChunkedBody{.body_bytes = decoded, .consumed_bytes = consumed};
}

}  // namespace brigade::net
