#ifndef BRIGADE_TOOLS_CLIENT_BEARER_TOKEN_H_
#define BRIGADE_TOOLS_CLIENT_BEARER_TOKEN_H_

// Where a client's bearer token comes from, never the command line (where `ps` and shell history
// would show it): a file given by `--auth-token-file`, or else the BRIGADE_TOKEN environment
// variable, or else none.
//
// The file holds the token on its first non-blank line (surrounding blanks ignored; a trailing
// newline is fine). Like the server's token file it must be a regular file that neither its group
// nor others may read or write; otherwise it is refused (FAILED_PRECONDITION with the chmod that
// fixes it).
//
// Stateless functions; safe from any thread.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace brigade::client {

inline constexpr char kTokenEnvironmentVariable[] = "BRIGADE_TOKEN";
inline constexpr size_t kMaxBearerTokenChars = 4096;

// OK for an empty token (none) or 1..4096 printable ASCII characters without spaces.
absl::Status CheckBearerToken(std::string_view token);

// The token from `token_file` when it is not empty, else from `environment_value` (the value of
// BRIGADE_TOKEN, null when unset), else "".
absl::StatusOr<std::string> ResolveBearerToken(const std::string& token_file,
                                               const char* environment_value);

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_BEARER_TOKEN_H_
