#ifndef BRIGADE_PROTOCOL_MODEL_VERSION_H_
#define BRIGADE_PROTOCOL_MODEL_VERSION_H_

// The protocol's model version string, as both wires carry it (a URL segment over HTTP, a
// `version` / `model_version` field over gRPC): empty means "let the server's version policy
// choose" (-1); otherwise a non-negative decimal integer. Pure function; thread-safe.

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace brigade::protocol {

// INVALID_ARGUMENT "<field> '<version>' is not a non-negative integer" on anything else.
absl::StatusOr<int64_t> ParseModelVersion(std::string_view version,
                                          std::string_view field = "model version");

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_MODEL_VERSION_H_
