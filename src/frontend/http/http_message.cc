#include "frontend/http/http_message.h"

#include "core/http_tokens.h"

namespace brigade::frontend {

void HttpHeaderList::Reserve(size_t count, size_t text_bytes) {
  entries_.reserve(count);
  text_.reserve(text_bytes);
}

void HttpHeaderList::Add(std::string_view name, std::string_view value) {
  Entry entry;
  entry.name_offset = static_cast<uint32_t>(text_.size());
  entry.name_size = static_cast<uint32_t>(name.size());
  text_.append(name);
  entry.value_offset = static_cast<uint32_t>(text_.size());
  entry.value_size = static_cast<uint32_t>(value.size());
  text_.append(value);
  entries_.push_back(entry);
}

std::optional<std::string_view> HttpHeaderList::Find(std::string_view name) const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (EqualsIgnoreCase(this->name(i), name)) return value(i);
  }
  return std::nullopt;
}

std::string_view HttpHeaderList::name(size_t i) const {
  return std::string_view(text_).substr(entries_[i].name_offset, entries_[i].name_size);
}

std::string_view HttpHeaderList::value(size_t i) const {
  return std::string_view(text_).substr(entries_[i].value_offset, entries_[i].value_size);
}

std::optional<std::string_view> HttpRequest::Header(std::string_view name) const {
  return headers.Find(name);
}

std::string_view HttpRequest::path() const {
  const std::string_view full(target);
  return full.substr(0, full.find('?'));
}

size_t HttpResponse::content_length() const {
  size_t length = body.size();
  for (const std::span<const std::byte>& part : body_parts) length += part.size();
  return length;
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.headers.push_back({"Content-Type", "application/json"});
  response.body = std::move(body);
  return response;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

}  // namespace brigade::frontend
