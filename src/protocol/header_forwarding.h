#ifndef BRIGADE_PROTOCOL_HEADER_FORWARDING_H_
#define BRIGADE_PROTOCOL_HEADER_FORWARDING_H_

// HeaderForwarding: Triton's --http-header-forward-pattern and --grpc-header-forward-pattern. An
// inference request's HTTP headers (gRPC metadata) whose names the pattern matches become request
// parameters of the same name with the header's value as a string, so routing rules and steps
// read them as they read parameters sent in the body.
//
//   * The pattern is RE2 syntax, matched anywhere in the header's name in lower case, and the
//     parameter is named so: header names are case-insensitive (HTTP/1.1 clients differ in how
//     they write them; HTTP/2 and gRPC always send lower case), so one rule reads a header
//     whichever client sent it. Triton matches HTTP names as sent; a pattern written in lower
//     case, or with `(?i)`, means the same on both servers.
//   * A parameter the request's body already carries wins over a header of the same name.
//   * A matching header that names a reserved parameter (priority, timeout, sequence_id, any
//     `triton_` key, ...) is refused with INVALID_ARGUMENT naming the header, as Triton refuses
//     it: a header must not turn on what the body did not ask for.
//   * `authorization` is never forwarded, whatever the pattern: a bearer token must not travel
//     on into parameters that reach every step of an ensemble.
//   * At most kMaxForwardedHeaders headers and kMaxForwardedValueBytes per value are taken; past
//     either the request is refused naming the header (nothing is dropped silently).
//
// Thread safety: immutable after Create; Forward may be called from any thread.
// Failure: Create returns INVALID_ARGUMENT naming `flag` for a pattern RE2 cannot compile.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/parameters.h"

namespace re2 {
class RE2;
}

namespace brigade::protocol {

inline constexpr size_t kMaxForwardedHeaders = 64;
inline constexpr size_t kMaxForwardedValueBytes = 8192;

class HeaderForwarding {
 public:
  static absl::StatusOr<std::unique_ptr<HeaderForwarding>> Create(std::string_view pattern,
                                                                  std::string_view flag);
  ~HeaderForwarding();

  HeaderForwarding(const HeaderForwarding&) = delete;
  HeaderForwarding& operator=(const HeaderForwarding&) = delete;

  // Whether the header called `name` (any case) is one to forward.
  bool Matches(std::string_view name) const;

  // Adds the header to `parameters` when it matches (see above). `forwarded` counts the headers
  // this request has forwarded so far (the caller starts it at 0).
  absl::Status Forward(std::string_view name, std::string_view value, Parameters* parameters,
                       size_t* forwarded) const;

  // Adds each of `forwarded` (what Forward collected into an empty map, once for a gRPC stream's
  // metadata) that `parameters` does not already carry.
  static void Merge(const Parameters& forwarded, Parameters* parameters);

  const std::string& pattern() const { return pattern_; }

  HeaderForwarding(std::string pattern, std::unique_ptr<re2::RE2> regex);

 private:
  const std::string pattern_;
  const std::unique_ptr<re2::RE2> regex_;
};

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_HEADER_FORWARDING_H_
