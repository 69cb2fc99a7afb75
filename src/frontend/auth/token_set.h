#ifndef BRIGADE_FRONTEND_AUTH_TOKEN_SET_H_
#define BRIGADE_FRONTEND_AUTH_TOKEN_SET_H_

// TokenSet: the bearer tokens a server accepts, parsed from the token file's text, each kept
// only as its SHA-256 digest with its scopes and a name for the logs.
//
// The file format, one token per line (blank lines and lines starting with '#' are skipped):
//
//   <scope>[,<scope>...]  <token>  <name>
//
//   scope   infer | admin | metrics
//   token   the secret as clients send it (16 to 4096 printable characters, no spaces), or
//           `sha256:<64 hex digits>`, the digest of the secret, so the file need not hold it
//   name    [A-Za-z0-9_.-]{1,64}, unique in the file; what the log says instead of the token
//
// or, for a client certificate (mutual TLS) instead of a token:
//
//   <scope>[,<scope>...]  cert:<identity>  <name>
//
//   identity  a name the certificate carries, compared exactly: a subject alternative name
//             (DNS, URI such as spiffe://..., e-mail) or the subject's common name (1 to 256
//             printable characters, no spaces: a common name with spaces can only be reached
//             through a SAN). Only certificates the TLS handshake verified are looked at.
//             Identities are not secrets: they are kept as written.
//
// FindIdentity() takes the first line, in file order, that names one of the certificate's names.
//
// Find() hashes the token presented and compares it with every entry's digest in constant time
// (CRYPTO_memcmp), without stopping at a match, so neither the content of a digest nor the
// position of a match shows in the time taken.
//
// Thread safety: immutable after Parse; share it freely (TokenStore hands out shared_ptrs).
// Failure: Parse returns INVALID_ARGUMENT naming the line and the field at fault, never the
// token.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace brigade::frontend::auth {

enum class Scope : uint8_t { kInfer = 1, kAdmin = 2, kMetrics = 4 };
using ScopeSet = uint8_t;

inline bool HasScope(ScopeSet scopes, Scope scope) {
  return (scopes & static_cast<ScopeSet>(scope)) != 0;
}
std::string_view ScopeName(Scope scope);
// "infer", "admin", "metrics"; INVALID_ARGUMENT for another name.
absl::StatusOr<Scope> ParseScope(std::string_view name);

using Digest = std::array<unsigned char, 32>;
Digest Sha256(std::string_view bytes);

// Limits of the file and its fields (bounded before anything is allocated for them).
inline constexpr size_t kMaxTokenFileBytes = size_t{1} << 20;
inline constexpr size_t kMaxTokens = 10'000;
inline constexpr size_t kMinTokenChars = 16;
inline constexpr size_t kMaxTokenChars = 4096;
inline constexpr size_t kMaxIdentityChars = 256;
inline constexpr std::string_view kIdentityPrefix = "cert:";

struct TokenEntry {
  Digest digest{};
  ScopeSet scopes = 0;
  std::string name;
};

struct IdentityEntry {
  std::string identity;
  ScopeSet scopes = 0;
  std::string name;
};

class TokenSet {
 public:
  using DigestEqual = absl::FunctionRef<bool(const Digest&, const Digest&)>;

  static absl::StatusOr<TokenSet> Parse(std::string_view text);

  // The entry whose token is `presented`, or null. `equal` is for tests (it counts the
  // comparisons); the default compares in constant time.
  const TokenEntry* Find(std::string_view presented) const;
  const TokenEntry* Find(std::string_view presented, DigestEqual equal) const;

  // The first identity line naming one of `names` (a verified client certificate's), or null.
  const IdentityEntry* FindIdentity(std::span<const std::string> names) const;

  // Tokens and identities together.
  size_t size() const { return entries_.size() + identities_.size(); }
  const std::vector<TokenEntry>& entries() const { return entries_; }
  const std::vector<IdentityEntry>& identities() const { return identities_; }

 private:
  std::vector<TokenEntry> entries_;
  std::vector<IdentityEntry> identities_;
};

// CRYPTO_memcmp over the two digests.
bool ConstantTimeEqual(const Digest& a, const Digest& b);

}  // namespace brigade::frontend::auth

#endif  // BRIGADE_FRONTEND_AUTH_TOKEN_SET_H_
