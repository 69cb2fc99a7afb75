#ifndef BRIGADE_FRONTEND_AUTH_ACCESS_POLICY_H_
#define BRIGADE_FRONTEND_AUTH_ACCESS_POLICY_H_

// Who may do what: the access decision for one request, as a pure function of the policy, the
// tokens configured and the request's facts. Both front ends call it (through AccessGate) before
// they decode anything; it knows neither Beast nor gRPC.
//
// The checks, in the order they run (the first that fails answers):
//   1. Host (HTTP only): with `allowed_hosts` set, a Host header not in the list is refused, so a
//      page on a rebinding DNS name cannot reach the server through a victim's browser.
//   2. Triton's restricted API groups (`--http-restricted-api`, `--grpc-restricted-protocol`):
//      an operation in a restricted group needs the header (gRPC: metadata
//      `triton-grpc-protocol-<key>`) with the value configured. HTTP answers 403, gRPC
//      UNAVAILABLE, as Triton does.
//   3. Bearer tokens (when a token file is configured): `Authorization: Bearer <token>`;
//      missing or unknown → 401 / UNAUTHENTICATED, known without the scope the operation needs →
//      403 / PERMISSION_DENIED. The health endpoints skip this check while `health_open`.
//      A request without a token whose connection presented a client certificate that the TLS
//      handshake verified (mutual TLS) is judged by the token file's `cert:` line naming one of
//      the certificate's names instead; a token, when sent, is what counts. A certificate is
//      not a credential for step 4: a browser presents one to any page's requests, as it sends
//      cookies.
//   4. Cross-site requests (HTTP load, unload, cache invalidation and log-settings POSTs without a
//      credential): an `Origin` other than the Host, or `Sec-Fetch-Site` cross-site or same-site
//      → 403; a body whose Content-Type is not `application/json` (text/plain, a form: what a
//      page may send without a preflight) → 415; a body without a Content-Type passes, as
//      Triton's clients send one. A browser sends
//      neither a bearer token nor a custom header cross-origin without a CORS preflight (which
//      Brigade never grants), so a credentialed request cannot be a forged one.
//
// Scopes: `infer` (inference, metadata, readiness, configuration, server health, shared memory
// status), `admin` (repository index/load/unload, cache invalidation, log and trace settings,
// shared memory register/unregister), `metrics` (/metrics, the
// dashboard page). Statistics take `statistics_scope` (infer by default: load generators read
// them). Scopes are independent: a token has exactly the ones its line lists.
//
// Messages never contain a token or a header's value. Thread safety: pure functions; the types
// are values. Failure: ParseRestriction and AddRestriction return INVALID_ARGUMENT naming the flag
// text at fault.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frontend/auth/token_set.h"

namespace brigade::frontend::auth {

// What a request asks to do, whichever protocol carried it.
enum class Operation : uint8_t {
  kServerLive,
  kServerReady,
  kServerMetadata,
  kModelMetadata,
  kModelReady,
  kModelInfer,
  kModelConfig,
  kModelStatistics,
  kRepositoryIndex,
  kRepositoryLoad,
  kRepositoryUnload,
  kLogSettings,
  kTraceSettings,
  kSharedMemoryStatus,
  kSharedMemoryRegister,  // register and unregister
  kCacheInvalidate,
  kMetrics,
  kDashboard,
};

std::string_view OperationName(Operation operation);

// Triton's API groups, as its restricted-API flags name them.
enum class ApiGroup : uint8_t {
  kHealth,
  kMetadata,
  kInference,
  kSharedMemory,
  kModelConfig,
  kModelRepository,
  kStatistics,
  kTrace,
  kLogging,
};

// "health", "model-repository", ...; nullopt for another name.
std::optional<ApiGroup> ParseApiGroup(std::string_view name);
std::string_view ApiGroupName(ApiGroup group);
// The group Triton files the operation under (model readiness is health, as in Triton; the cache
// invalidation, Brigade's own, is model-repository); nullopt for /metrics and the dashboard, which
// Triton serves outside these groups.
std::optional<ApiGroup> GroupOf(Operation operation);

// The scope a token needs for the operation.
Scope RequiredScope(Operation operation, Scope statistics_scope);

// One restricted-API flag: these groups need header `header` with value `value`.
struct Restriction {
  uint32_t groups = 0;  // bit (1 << ApiGroup)
  std::string header;   // as given (HTTP compares names case-insensitively)
  std::string value;
};

// "<group>[,<group>...]:<key>=<value>" (Triton's syntax). `flag` names the flag in errors.
absl::StatusOr<Restriction> ParseRestriction(std::string_view text, std::string_view flag);
// Appends `restriction`, refusing a group already restricted by an earlier flag (Triton allows
// one key per group).
absl::Status AddRestriction(Restriction restriction, std::vector<Restriction>* restrictions);

// The key gRPC clients send a Triton restriction under.
inline constexpr std::string_view kGrpcRestrictedPrefix = "triton-grpc-protocol-";

// Why a request was refused; kNone when it was not.
enum class Refusal : uint8_t {
  kNone,
  kHost,
  kRestricted,
  kMissingToken,
  kInvalidToken,
  kScope,
  kOrigin,
  kContentType,
};
inline constexpr int kRefusalCount = 8;

// The metrics label: "host", "restricted", "missing_token", ...
std::string_view RefusalName(Refusal refusal);
// What each protocol's client sees for the refusal.
int HttpStatusFor(Refusal refusal);
absl::StatusCode GrpcCodeFor(Refusal refusal);

struct PolicyOptions {
  // Server live/ready answer without a token (probes); Triton restrictions still apply.
  bool health_open = true;
  Scope statistics_scope = Scope::kInfer;
  // Triton's restrictions, per protocol (`--http-restricted-api`, `--grpc-restricted-protocol`).
  std::vector<Restriction> http_restrictions;
  std::vector<Restriction> grpc_restrictions;
  // HTTP Host header values accepted ("name" matches any port, "name:port" that port only);
  // empty: any.
  std::vector<std::string> allowed_hosts;
};

inline std::span<const std::string> NoPeerNames() { return {}; }

// One request's facts. Borrowed for the call.
struct RequestFacts {
  Operation operation = Operation::kServerLive;
  bool http = true;
  // A header (HTTP, case-insensitive) or metadata entry (gRPC, lower-case key) by name.
  absl::FunctionRef<std::optional<std::string_view>(std::string_view)> header;
  // HTTP: whether the request is a POST with a non-empty body.
  bool post = false;
  bool has_body = false;
  // The names (SANs, common name) of the client certificate the TLS handshake verified; empty
  // without one. Asked only when the token file has `cert:` lines and no token was sent (gRPC
  // reads them off the call's auth context, which costs an allocation).
  absl::FunctionRef<std::span<const std::string>()> peer_names = NoPeerNames;
};

struct Decision {
  Refusal refusal = Refusal::kNone;
  // For the client and the log; names the header or scope wanted, never a secret.
  std::string message;
  // The token's name when one was presented and matched (for the log); empty otherwise.
  std::string principal;
  // The scope the operation needed (for WWW-Authenticate).
  Scope scope = Scope::kInfer;

  bool ok() const { return refusal == Refusal::kNone; }
};

// The decision for `facts`. `tokens` null: no token file configured (step 3 is skipped).
Decision Decide(const PolicyOptions& policy, const TokenSet* tokens, const RequestFacts& facts);

// "application/json" with or without parameters (case-insensitive).
bool IsJsonMediaType(std::string_view content_type);

}  // namespace brigade::frontend::auth

#endif  // BRIGADE_FRONTEND_AUTH_ACCESS_POLICY_H_
