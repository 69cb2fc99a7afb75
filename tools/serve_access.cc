#include "tools/serve_access.h"

#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::tools {

void AddAccessFlags(CLI::App* serve, AccessFlags* flags) {
  serve->add_option("--auth-token-file", flags->auth_token_file,
                    "Bearer tokens, one '<scope>[,<scope>...] <token> <name>' a line (scopes: "
                    "infer, admin, metrics; mode 600 or stricter; re-read on SIGHUP or change)");
  serve
      ->add_option("--auth-health-open", flags->auth_health_open,
                   "Serve /v2/health/live and /v2/health/ready without a token (probes)")
      ->capture_default_str();
  serve
      ->add_option("--auth-statistics-scope", flags->auth_statistics_scope,
                   "Scope the statistics endpoints need")
      ->check(CLI::IsMember({"infer", "admin"}))
      ->capture_default_str();
  serve->add_option("--http-restricted-api", flags->http_restricted_api,
                    "Triton's: <api>[,<api>...]:<key>=<value>; those API groups need header "
                    "<key>: <value> (403 otherwise; repeatable)");
  serve->add_option("--grpc-restricted-protocol", flags->grpc_restricted_protocol,
                    "Triton's: <protocol>[,...]:<key>=<value>; those calls need metadata "
                    "triton-grpc-protocol-<key> (UNAVAILABLE otherwise; repeatable)");
  serve
      ->add_option("--allowed-hosts", flags->allowed_hosts,
                   "HTTP Host header values answered (name or name:port, comma-separated); "
                   "others get 403 (default: any)")
      ->delimiter(',');
}

bool IsLoopback(std::string_view address) {
  return address.starts_with("127.") || address == "::1" || address == "[::1]" ||
         address == "localhost";
}

bool RestrictsRepository(const std::vector<frontend::auth::Restriction>& restrictions) {
  const uint32_t bit = uint32_t{1} << static_cast<int>(frontend::auth::ApiGroup::kModelRepository);
  for (const frontend::auth::Restriction& restriction : restrictions) {
    if ((restriction.groups & bit) != 0) return true;
  }
  return false;
}

absl::StatusOr<frontend::auth::PolicyOptions> AccessPolicy(const AccessFlags& flags) {
  frontend::auth::PolicyOptions policy;
  policy.health_open = flags.auth_health_open;
  absl::StatusOr<frontend::auth::Scope> statistics =
      frontend::auth::ParseScope(flags.auth_statistics_scope);
  if (!statistics.ok()) {
    return absl::InvalidArgumentError(
        StrCat("--auth-statistics-scope: ", statistics.status().message()));
  }
  policy.statistics_scope = *statistics;
  for (const std::string& text : flags.http_restricted_api) {
    BRIGADE_ASSIGN_OR_RETURN(frontend::auth::Restriction restriction,
                             frontend::auth::ParseRestriction(text, "--http-restricted-api"));
    BRIGADE_RETURN_IF_ERROR(
        frontend::auth::AddRestriction(std::move(restriction), &policy.http_restrictions));
  }
  for (const std::string& text : flags.grpc_restricted_protocol) {
    BRIGADE_ASSIGN_OR_RETURN(frontend::auth::Restriction restriction,
                             frontend::auth::ParseRestriction(text, "--grpc-restricted-protocol"));
    BRIGADE_RETURN_IF_ERROR(
        frontend::auth::AddRestriction(std::move(restriction), &policy.grpc_restrictions));
  }
  policy.allowed_hosts = flags.allowed_hosts;
  return policy;
}

}  // namespace brigade::tools
