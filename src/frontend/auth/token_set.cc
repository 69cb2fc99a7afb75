#include "frontend/auth/token_set.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <memory>
#include <unordered_set>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::frontend::auth {
namespace {

constexpr size_t kMaxNameChars = 64;
constexpr std::string_view kDigestPrefix = "sha256:";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Splits a line into whitespace-separated fields; at most `max` + 1 (the extra one says "too
// many").
std::vector<std::string_view> Fields(std::string_view line, size_t max) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size() && fields.size() <= max) {
    while (i < line.size() && IsSpace(line[i])) ++i;
    if (i == line.size()) break;
    const size_t start = i;
    while (i < line.size() && !IsSpace(line[i])) ++i;
    fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameChars) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool PrintableToken(std::string_view token) {
  for (char c : token) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

absl::Status LineError(size_t line, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("token file line ", line, ": ", what));
}

absl::StatusOr<ScopeSet> ParseScopes(std::string_view text, size_t line) {
  ScopeSet scopes = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    absl::StatusOr<Scope> scope = ParseScope(text.substr(start, comma - start));
    if (!scope.ok()) return LineError(line, ToStd(scope.status().message()));
    scopes |= static_cast<ScopeSet>(*scope);
    start = comma + 1;
  }
  return scopes;
}

absl::StatusOr<Digest> ParseCredential(std::string_view token, size_t line) {
  if (token.starts_with(kDigestPrefix)) {
    const std::string_view hex = token.substr(kDigestPrefix.size());
    Digest digest{};
    if (hex.size() != 2 * digest.size()) {
      return LineError(line, "a sha256: token needs exactly 64 hex digits");
    }
    for (size_t i = 0; i < digest.size(); ++i) {
      const int high = HexDigit(hex[2 * i]);
      const int low = HexDigit(hex[2 * i + 1]);
      if (high < 0 || low < 0) return LineError(line, "a sha256: token has a non-hex digit");
      digest[i] = static_cast<unsigned char>(high * 16 + low);
    }
    return digest;
  }
  if (token.size() < kMinTokenChars || token.size() > kMaxTokenChars) {
    return LineError(line, StrCat("a token must have ", kMinTokenChars, " to ", kMaxTokenChars,
                                  " characters (this one has ", token.size(), ")"));
  }
  if (!PrintableToken(token)) return LineError(line, "a token must be printable ASCII");
  return Sha256(token);
}

}  // namespace

std::string_view ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kInfer:
      return "infer";
    case Scope::kAdmin:
      return "admin";
    case Scope::kMetrics:
      return "metrics";
  }
  return "unknown";
}

absl::StatusOr<Scope> ParseScope(std::string_view name) {
  if (name == "infer") return Scope::kInfer;
  if (name == "admin") return Scope::kAdmin;
  if (name == "metrics") return Scope::kMetrics;
  return absl::InvalidArgumentError(
      StrCat("unknown scope '", name, "'; use infer, admin or metrics"));
}

Digest Sha256(std::string_view bytes) {
  // OpenSSL 3's one-shot SHA256() looks the algorithm up on every call (~540 ns for a 28-byte
  // token on the development machine); the algorithm fetched once and a context kept per thread
  // take ~200 ns, and every request with a token pays this.
  struct ContextFree {
    void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
  };
  static EVP_MD* const algorithm = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  thread_local const std::unique_ptr<EVP_MD_CTX, ContextFree> context(EVP_MD_CTX_new());
  Digest digest{};
  unsigned int size = 0;
  if (algorithm != nullptr && context != nullptr &&
      EVP_DigestInit_ex2(context.get(), algorithm, nullptr) == 1 &&
      EVP_DigestUpdate(context.get(), bytes.data(), bytes.size()) == 1 &&
      EVP_DigestFinal_ex(context.get(), digest.data(), &size) == 1 && size == digest.size()) {
    return digest;
  }
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest.data());
  return digest;
}

bool ConstantTimeEqual(const Digest& a, const Digest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::StatusOr<TokenSet> TokenSet::Parse(std::string_view text) {
  if (text.size() > kMaxTokenFileBytes) {
    return absl::InvalidArgumentError(
        StrCat("token file has ", text.size(), " bytes; the limit is ", kMaxTokenFileBytes));
  }
  TokenSet set;
  std::unordered_set<std::string> names;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    const std::vector<std::string_view> fields = Fields(line, 3);
    if (fields.empty() || fields[0].starts_with('#')) continue;
    if (fields.size() != 3) {
      return LineError(line_number, "expected '<scopes> <token> <name>'");
    }
    BRIGADE_ASSIGN_OR_RETURN(ScopeSet scopes, ParseScopes(fields[0], line_number));
    if (!ValidName(fields[2])) {
      return LineError(line_number, "a name is 1 to 64 of [A-Za-z0-9_.-]");
    }
    if (!names.insert(std::string(fields[2])).second) {
      return LineError(line_number, StrCat("name '", fields[2], "' appears twice"));
    }
    if (set.size() == kMaxTokens) {
      return LineError(line_number, StrCat("more than ", kMaxTokens, " tokens"));
    }
    if (fields[1].starts_with(kIdentityPrefix)) {
      const std::string_view identity = fields[1].substr(kIdentityPrefix.size());
      if (identity.empty() || identity.size() > kMaxIdentityChars || !PrintableToken(identity)) {
        return LineError(line_number, StrCat("a cert: identity must have 1 to ", kMaxIdentityChars,
                                             " printable characters"));
      }
      for (const IdentityEntry& entry : set.identities_) {
        if (entry.identity == identity) {
          return LineError(line_number, StrCat("identity '", identity, "' of '", fields[2],
                                               "' is already the identity of '", entry.name, "'"));
        }
      }
      set.identities_.push_back({std::string(identity), scopes, std::string(fields[2])});
      continue;
    }
    BRIGADE_ASSIGN_OR_RETURN(Digest digest, ParseCredential(fields[1], line_number));
    for (const TokenEntry& entry : set.entries_) {
      if (ConstantTimeEqual(entry.digest, digest)) {
        return LineError(line_number, StrCat("the token of '", fields[2],
                                             "' is the same as the token of '", entry.name, "'"));
      }
    }
    set.entries_.push_back({digest, scopes, std::string(fields[2])});
  }
  return set;
}

const IdentityEntry* TokenSet::FindIdentity(std::span<const std::string> names) const {
  for (const IdentityEntry& entry : identities_) {
    for (const std::string& name : names) {
      if (name == entry.identity) return &entry;
    }
  }
  return nullptr;
}

const TokenEntry* TokenSet::Find(std::string_view presented) const {
  return Find(presented, ConstantTimeEqual);
}

const TokenEntry* TokenSet::Find(std::string_view presented, DigestEqual equal) const {
  if (presented.empty() || presented.size() > kMaxTokenChars) return nullptr;
  const Digest digest = Sha256(presented);
  const TokenEntry* found = nullptr;
  // Every entry is compared, match or not: the time does not depend on where a match is.
  for (const TokenEntry& entry : entries_) {
    const bool same = equal(entry.digest, digest);
    if (same && found == nullptr) found = &entry;
  }
  return found;
}

}  // namespace brigade::frontend::auth
