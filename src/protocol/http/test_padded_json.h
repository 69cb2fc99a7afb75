#ifndef BRIGADE_PROTOCOL_HTTP_TEST_PADDED_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_TEST_PADDED_JSON_H_

// Tests only: a JSON text followed by the read-ahead padding the client's DOM decoders require
// (json_dom_reader.h), the way the client's receive buffer holds a response body.
// Thread safety: immutable once made.

#include <cstddef>
#include <string>
#include <string_view>

#include "protocol/http/json_dom_reader.h"

namespace brigade::protocol::http {

class PaddedJson {
 public:
  explicit PaddedJson(std::string_view text) : size_(text.size()), bytes_(text) {
    bytes_.append(kJsonPaddingBytes, ' ');
  }
  // The text alone; the padding follows it in memory.
  std::string_view json() const { return {bytes_.data(), size_}; }

 private:
  size_t size_;
  std::string bytes_;
};

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_TEST_PADDED_JSON_H_
