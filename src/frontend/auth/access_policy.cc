#include "frontend/auth/access_policy.h"

#include <openssl/crypto.h>

#include <utility>

#include "core/strings.h"

namespace brigade::frontend::auth {
namespace {

constexpr struct {
  ApiGroup group;
  std::string_view name;
} kGroupNames[] = {
    {ApiGroup::kHealth, "health"},
    {ApiGroup::kMetadata, "metadata"},
    {ApiGroup::kInference, "inference"},
    {ApiGroup::kSharedMemory, "shared-memory"},
    {ApiGroup::kModelConfig, "model-config"},
    {ApiGroup::kModelRepository, "model-repository"},
    {ApiGroup::kStatistics, "statistics"},
    {ApiGroup::kTrace, "trace"},
    {ApiGroup::kLogging, "logging"},
};

uint32_t Bit(ApiGroup group) { return uint32_t{1} << static_cast<unsigned>(group); }

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string Lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = Lower(c);
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Header values compared without an early exit at the first differing byte (the length still
// shows, as it does for any compare of unequal lengths).
bool SecretEqual(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// The host part of a Host header or an allowed-hosts entry ("[::1]:8000" → "[::1]").
std::string_view HostPart(std::string_view authority) {
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    return close == std::string_view::npos ? authority : authority.substr(0, close + 1);
  }
  const size_t colon = authority.rfind(':');
  return colon == std::string_view::npos ? authority : authority.substr(0, colon);
}

bool HostAllowed(const std::vector<std::string>& allowed, std::string_view host) {
  const std::string_view host_only = HostPart(host);
  for (const std::string& entry : allowed) {
    if (EqualsIgnoreCase(entry, host)) return true;
    // An entry without a port accepts the name on any port.
    if (HostPart(entry) == entry && EqualsIgnoreCase(entry, host_only)) return true;
  }
  return false;
}

// The authority of an Origin ("https://a.example:8443" → "a.example:8443"); empty for "null" or
// anything without a scheme.
std::string_view OriginAuthority(std::string_view origin) {
  const size_t scheme_end = origin.find("://");
  if (scheme_end == std::string_view::npos) return {};
  std::string_view rest = origin.substr(scheme_end + 3);
  const size_t slash = rest.find('/');
  if (slash != std::string_view::npos) rest = rest.substr(0, slash);
  return rest;
}

// The admin POSTs that change state (the repository index only lists, and a page elsewhere
// cannot read the answer).
bool IsAdminPost(Operation operation) {
  switch (operation) {
    case Operation::kRepositoryLoad:
    case Operation::kRepositoryUnload:
    case Operation::kCacheInvalidate:
    case Operation::kLogSettings:
    case Operation::kTraceSettings:
    case Operation::kSharedMemoryRegister:
      return true;
    default:
      return false;
  }
}

Decision Refuse(Refusal refusal, std::string message, Scope scope, std::string principal = {}) {
  Decision decision;
  decision.refusal = refusal;
  decision.message = std::move(message);
  decision.scope = scope;
  decision.principal = std::move(principal);
  return decision;
}

}  // namespace

std::string_view OperationName(Operation operation) {
  switch (operation) {
    case Operation::kServerLive:
      return "server live";
    case Operation::kServerReady:
      return "server ready";
    case Operation::kServerMetadata:
      return "server metadata";
    case Operation::kModelMetadata:
      return "model metadata";
    case Operation::kModelReady:
      return "model ready";
    case Operation::kModelInfer:
      return "inference";
    case Operation::kModelConfig:
      return "model config";
    case Operation::kModelStatistics:
      return "statistics";
    case Operation::kRepositoryIndex:
      return "repository index";
    case Operation::kRepositoryLoad:
      return "model load";
    case Operation::kRepositoryUnload:
      return "model unload";
    case Operation::kLogSettings:
      return "log settings";
    case Operation::kTraceSettings:
      return "trace settings";
    case Operation::kSharedMemoryStatus:
      return "shared memory status";
    case Operation::kSharedMemoryRegister:
      return "shared memory registration";
    case Operation::kCacheInvalidate:
      return "cache invalidation";
    case Operation::kMetrics:
      return "metrics";
    case Operation::kDashboard:
      return "dashboard";
  }
  return "unknown";
}

std::optional<ApiGroup> ParseApiGroup(std::string_view name) {
  for (const auto& entry : kGroupNames) {
    if (entry.name == name) return entry.group;
  }
  return std::nullopt;
}

std::string_view ApiGroupName(ApiGroup group) {
  for (const auto& entry : kGroupNames) {
    if (entry.group == group) return entry.name;
  }
  return "unknown";
}

std::optional<ApiGroup> GroupOf(Operation operation) {
  switch (operation) {
    case Operation::kServerLive:
    case Operation::kServerReady:
    case Operation::kModelReady:
      return ApiGroup::kHealth;
    case Operation::kServerMetadata:
    case Operation::kModelMetadata:
      return ApiGroup::kMetadata;
    case Operation::kModelInfer:
      return ApiGroup::kInference;
    case Operation::kModelConfig:
      return ApiGroup::kModelConfig;
    case Operation::kModelStatistics:
      return ApiGroup::kStatistics;
    case Operation::kRepositoryIndex:
    case Operation::kRepositoryLoad:
    case Operation::kRepositoryUnload:
    case Operation::kCacheInvalidate:
      return ApiGroup::kModelRepository;
    case Operation::kLogSettings:
      return ApiGroup::kLogging;
    case Operation::kTraceSettings:
      return ApiGroup::kTrace;
    case Operation::kSharedMemoryStatus:
    case Operation::kSharedMemoryRegister:
      return ApiGroup::kSharedMemory;
    case Operation::kMetrics:
    case Operation::kDashboard:
      return std::nullopt;
  }
  return std::nullopt;
}

Scope RequiredScope(Operation operation, Scope statistics_scope) {
  switch (operation) {
    case Operation::kServerLive:
    case Operation::kServerReady:
    case Operation::kServerMetadata:
    case Operation::kModelMetadata:
    case Operation::kModelReady:
    case Operation::kModelInfer:
    case Operation::kModelConfig:
    case Operation::kSharedMemoryStatus:
      return Scope::kInfer;
    case Operation::kModelStatistics:
      return statistics_scope;
    case Operation::kRepositoryIndex:
    case Operation::kRepositoryLoad:
    case Operation::kRepositoryUnload:
    case Operation::kLogSettings:
    case Operation::kTraceSettings:
    case Operation::kSharedMemoryRegister:
    case Operation::kCacheInvalidate:
      return Scope::kAdmin;
    case Operation::kMetrics:
    case Operation::kDashboard:
      return Scope::kMetrics;
  }
  return Scope::kAdmin;
}

absl::StatusOr<Restriction> ParseRestriction(std::string_view text, std::string_view flag) {
  const size_t colon = text.find(':');
  const size_t equals = colon == std::string_view::npos ? colon : text.find('=', colon);
  if (colon == std::string_view::npos || equals == std::string_view::npos) {
    return absl::InvalidArgumentError(
        StrCat(flag, " '", text, "' is not <api>[,<api>...]:<key>=<value>"));
  }
  Restriction restriction;
  const std::string_view groups = text.substr(0, colon);
  size_t start = 0;
  while (start <= groups.size()) {
    size_t comma = groups.find(',', start);
    if (comma == std::string_view::npos) comma = groups.size();
    const std::string_view name = Trim(groups.substr(start, comma - start));
    const std::optional<ApiGroup> group = ParseApiGroup(name);
    if (!group) {
      return absl::InvalidArgumentError(
          StrCat(flag, ": unknown API group '", name,
                 "'; use health, metadata, inference, shared-memory, model-config, "
                 "model-repository, statistics, trace or logging"));
    }
    restriction.groups |= Bit(*group);
    start = comma + 1;
  }
  const std::string_view key = text.substr(colon + 1, equals - colon - 1);
  const std::string_view value = text.substr(equals + 1);
  if (key.empty() || value.empty()) {
    return absl::InvalidArgumentError(StrCat(flag, ": the key and the value must not be empty"));
  }
  for (char c : key) {
    const bool token_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!token_char) {
      return absl::InvalidArgumentError(
          StrCat(flag, ": header key '", key, "' may hold only letters, digits, '-', '_', '.'"));
    }
  }
  restriction.header = std::string(key);
  restriction.value = std::string(value);
  return restriction;
}

absl::Status AddRestriction(Restriction restriction, std::vector<Restriction>* restrictions) {
  for (const Restriction& existing : *restrictions) {
    if (const uint32_t both = existing.groups & restriction.groups; both != 0) {
      for (const auto& entry : kGroupNames) {
        if ((both & Bit(entry.group)) != 0) {
          return absl::InvalidArgumentError(
              StrCat("API group '", entry.name, "' is restricted twice; give it one key"));
        }
      }
    }
  }
  restrictions->push_back(std::move(restriction));
  return absl::OkStatus();
}

std::string_view RefusalName(Refusal refusal) {
  switch (refusal) {
    case Refusal::kNone:
      return "none";
    case Refusal::kHost:
      return "host";
    case Refusal::kRestricted:
      return "restricted";
    case Refusal::kMissingToken:
      return "missing_token";
    case Refusal::kInvalidToken:
      return "invalid_token";
    case Refusal::kScope:
      return "scope";
    case Refusal::kOrigin:
      return "origin";
    case Refusal::kContentType:
      return "content_type";
  }
  return "unknown";
}

int HttpStatusFor(Refusal refusal) {
  switch (refusal) {
    case Refusal::kNone:
      return 200;
    case Refusal::kMissingToken:
    case Refusal::kInvalidToken:
      return 401;
    case Refusal::kContentType:
      return 415;
    case Refusal::kHost:
    case Refusal::kRestricted:
    case Refusal::kScope:
    case Refusal::kOrigin:
      return 403;
  }
  return 403;
}

absl::StatusCode GrpcCodeFor(Refusal refusal) {
  switch (refusal) {
    case Refusal::kNone:
      return absl::StatusCode::kOk;
    case Refusal::kMissingToken:
    case Refusal::kInvalidToken:
      return absl::StatusCode::kUnauthenticated;
    case Refusal::kRestricted:
      // Triton's answer to a call without the restricted protocol's header.
      return absl::StatusCode::kUnavailable;
    case Refusal::kHost:
    case Refusal::kScope:
    case Refusal::kOrigin:
    case Refusal::kContentType:
      return absl::StatusCode::kPermissionDenied;
  }
  return absl::StatusCode::kPermissionDenied;
}

bool IsJsonMediaType(std::string_view content_type) {
  const size_t semicolon = content_type.find(';');
  return EqualsIgnoreCase(Trim(content_type.substr(0, semicolon)), "application/json");
}

Decision Decide(const PolicyOptions& policy, const TokenSet* tokens, const RequestFacts& facts) {
  const Operation operation = facts.operation;
  const Scope scope = RequiredScope(operation, policy.statistics_scope);
  if (facts.http && !policy.allowed_hosts.empty()) {
    const std::optional<std::string_view> host = facts.header("host");
    if (!host || !HostAllowed(policy.allowed_hosts, Trim(*host))) {
      return Refuse(Refusal::kHost,
                    StrCat("Host '", host ? Trim(*host) : std::string_view(),
                           "' is not one this server answers to (--allowed-hosts)"),
                    scope);
    }
  }

  bool credentialed = false;
  if (const std::optional<ApiGroup> group = GroupOf(operation)) {
    for (const Restriction& restriction :
         facts.http ? policy.http_restrictions : policy.grpc_restrictions) {
      if ((restriction.groups & Bit(*group)) == 0) continue;
      const std::string key = facts.http
                                  ? restriction.header
                                  : StrCat(kGrpcRestrictedPrefix, Lowered(restriction.header));
      const std::optional<std::string_view> value = facts.header(key);
      if (!value || !SecretEqual(*value, restriction.value)) {
        return Refuse(Refusal::kRestricted,
                      StrCat("the ", ApiGroupName(*group), " API is restricted: send header '", key,
                             "' with its value"),
                      scope);
      }
      credentialed = true;
    }
  }

  std::string principal;
  const bool open = policy.health_open &&
                    (operation == Operation::kServerLive || operation == Operation::kServerReady);
  if (tokens != nullptr && !open) {
    const std::optional<std::string_view> header = facts.header("authorization");
    std::string_view presented;
    if (header) {
      const std::string_view value = Trim(*header);
      const size_t space = value.find(' ');
      if (space != std::string_view::npos && EqualsIgnoreCase(value.substr(0, space), "bearer")) {
        presented = Trim(value.substr(space + 1));
      }
    }
    const IdentityEntry* identity = presented.empty() && !tokens->identities().empty()
                                        ? tokens->FindIdentity(facts.peer_names())
                                        : nullptr;
    if (identity != nullptr) {
      if (!HasScope(identity->scopes, scope)) {
        return Refuse(Refusal::kScope,
                      StrCat("client certificate '", identity->name, "' lacks scope '",
                             ScopeName(scope), "', which ", OperationName(operation), " needs"),
                      scope, identity->name);
      }
      // Not `credentialed`: a certificate does not lift step 4's checks.
      principal = identity->name;
    } else {
      if (presented.empty()) {
        return Refuse(Refusal::kMissingToken,
                      StrCat(OperationName(operation),
                             " needs a bearer token (Authorization: Bearer <token>)"),
                      scope);
      }
      const TokenEntry* entry = tokens->Find(presented);
      if (entry == nullptr) {
        return Refuse(Refusal::kInvalidToken, "the bearer token is not valid", scope);
      }
      if (!HasScope(entry->scopes, scope)) {
        return Refuse(Refusal::kScope,
                      StrCat("token '", entry->name, "' lacks scope '", ScopeName(scope),
                             "', which ", OperationName(operation), " needs"),
                      scope, entry->name);
      }
      principal = entry->name;
      credentialed = true;
    }
  }

  if (facts.http && facts.post && IsAdminPost(operation) && !credentialed) {
    const std::optional<std::string_view> fetch_site = facts.header("sec-fetch-site");
    const std::optional<std::string_view> origin = facts.header("origin");
    const std::optional<std::string_view> host = facts.header("host");
    const bool cross_site_fetch =
        fetch_site && (EqualsIgnoreCase(Trim(*fetch_site), "cross-site") ||
                       EqualsIgnoreCase(Trim(*fetch_site), "same-site"));
    const bool foreign_origin =
        origin && (!host || !EqualsIgnoreCase(OriginAuthority(Trim(*origin)), Trim(*host)));
    if (cross_site_fetch || foreign_origin) {
      return Refuse(Refusal::kOrigin,
                    StrCat(OperationName(operation),
                           " from another origin needs a credential (a bearer token)"),
                    scope);
    }
    // A body without a Content-Type passes: Triton's clients send their JSON so, and a browser
    // that sends one cross-origin also sends the Origin checked above.
    if (facts.has_body) {
      const std::optional<std::string_view> content_type = facts.header("content-type");
      if (content_type && !IsJsonMediaType(*content_type)) {
        return Refuse(
            Refusal::kContentType,
            StrCat(OperationName(operation), " takes a body of Content-Type application/json"),
            scope);
      }
    }
  }

  Decision allowed;
  allowed.scope = scope;
  allowed.principal = std::move(principal);
  return allowed;
}

}  // namespace brigade::frontend::auth
