#ifndef BRIGADE_TOOLS_SERVE_TLS_H_
#define BRIGADE_TOOLS_SERVE_TLS_H_

// The TLS part of `brigade serve`: one front end's flags (Triton's --grpc-use-ssl family, and
// the same five for HTTP), their checks at start, and the logged reload of a rotation.
//
// Thread safety: none; `brigade serve`'s main thread uses them. Failure: OpenTls returns
// INVALID_ARGUMENT (or NOT_FOUND) naming the flag at fault; ReloadTls only logs.

#include <memory>
#include <string>

#include "CLI/App.hpp"
#include "absl/status/statusor.h"
#include "frontend/tls/tls_credential_store.h"

namespace brigade::tools {

// One front end's TLS flags: --<protocol>-use-ssl, -server-cert, -server-key, -root-cert,
// -use-ssl-mutual.
struct TlsFlags {
  std::string prefix{};
  bool use_ssl = false;
  bool mutual = false;
  std::string server_cert{};
  std::string server_key{};
  std::string root_cert{};
};

// Registers --<prefix>-use-ssl, -server-cert, -server-key, -root-cert and -use-ssl-mutual on
// `serve` for `tls` (borrowed; outlives `serve`); `protocol` names the port in the help text.
void AddTlsFlags(CLI::App* serve, TlsFlags* tls, const char* protocol);

// Whether any of `tls`'s flags was given (TLS on, or a certificate named).
bool TlsFlagsSet(const TlsFlags& tls);

// The credentials `tls` names, checked (and logged); null when TLS is off.
absl::StatusOr<std::unique_ptr<frontend::tls::TlsCredentialStore>> OpenTls(const TlsFlags& tls);

// One front end's certificate files and what takes a rotation of them into use.
struct TlsReload {
  frontend::tls::TlsCredentialStore* store = nullptr;
  frontend::tls::TlsCredentialStore::Apply apply;
};

// Reloads `reload.store` (`always`: whatever changed, as on SIGHUP; else only if a file
// changed) and logs the certificate taken in, or the error and that the one in force stays.
void ReloadTls(const TlsReload& reload, bool always);

}  // namespace brigade::tools

#endif  // BRIGADE_TOOLS_SERVE_TLS_H_
