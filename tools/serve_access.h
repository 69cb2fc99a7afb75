#ifndef BRIGADE_TOOLS_SERVE_ACCESS_H_
#define BRIGADE_TOOLS_SERVE_ACCESS_H_

// The access-control part of `brigade serve` (README "Security"): its flags (bearer tokens,
// Triton's --http-restricted-api / --grpc-restricted-protocol, allowed hosts) and the policy
// they describe.
//
// Thread safety: none; `brigade serve`'s main thread uses them. Failure: AccessPolicy returns
// INVALID_ARGUMENT naming the flag at fault.

#include <string>
#include <string_view>
#include <vector>

#include "CLI/App.hpp"
#include "absl/status/statusor.h"
#include "frontend/auth/access_policy.h"

namespace brigade::tools {

struct AccessFlags {
  std::string auth_token_file{};
  bool auth_health_open = true;
  std::string auth_statistics_scope = "infer";
  std::vector<std::string> http_restricted_api{};
  std::vector<std::string> grpc_restricted_protocol{};
  std::vector<std::string> allowed_hosts{};
};

// Registers --auth-token-file, --auth-health-open, --auth-statistics-scope,
// --http-restricted-api, --grpc-restricted-protocol and --allowed-hosts on `serve` for `flags`
// (borrowed; outlives `serve`).
void AddAccessFlags(CLI::App* serve, AccessFlags* flags);

// The access policy the flags describe; INVALID_ARGUMENT names the flag at fault.
absl::StatusOr<frontend::auth::PolicyOptions> AccessPolicy(const AccessFlags& flags);

// Whether a Triton restriction puts the repository API (load/unload) behind a header.
bool RestrictsRepository(const std::vector<frontend::auth::Restriction>& restrictions);

// Whether a listen address reaches only this host.
bool IsLoopback(std::string_view address);

}  // namespace brigade::tools

#endif  // BRIGADE_TOOLS_SERVE_ACCESS_H_
