#ifndef BRIGADE_FRONTEND_TLS_TLS_CREDENTIALS_H_
#define BRIGADE_FRONTEND_TLS_TLS_CREDENTIALS_H_

// TlsCredentials: a server's certificate chain, its private key and (for client verification)
// the root certificates, read from PEM files and checked with OpenSSL before any front end uses
// them, so that a bad file is refused with a message instead of failing handshakes later.
//
//   * Checks: the certificate file holds at least one PEM certificate and nothing else that
//     fails to parse; the key file holds one unencrypted PEM private key that matches the first
//     (leaf) certificate; the root file, when given, holds at least one PEM certificate. Files
//     over kMaxTlsFileBytes are refused.
//   * Messages name the flag (`flag_prefix` + "-server-cert", "-server-key", "-root-cert", so
//     "--http-server-key: ..."), the path and OpenSSL's reason.
//   * An expired leaf certificate is not refused (a server with an expired certificate still
//     starts, as nginx and Triton do); `expired` tells the caller, which warns.
//
// Pure functions of the files: thread-safe.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace brigade::frontend::tls {

inline constexpr size_t kMaxTlsFileBytes = size_t{1} << 20;

// Where one front end's credentials live.
struct TlsFiles {
  std::string cert_path{};       // PEM certificate chain, leaf first (required)
  std::string key_path{};        // PEM private key of the leaf, unencrypted (required)
  std::string root_cert_path{};  // PEM roots that client certificates must chain to (optional)
  // Prefix of the flags the paths came from, for messages: "--http" or "--grpc".
  std::string flag_prefix = "--tls";
};

// What a file looked like when it was read, to notice a change (rotation) later.
struct FileIdentity {
  ino_t inode = 0;
  int64_t size = -1;
  int64_t mtime_ns = -1;
  bool operator==(const FileIdentity&) const = default;
};

struct TlsCredentials {
  std::string cert_chain_pem;
  std::string private_key_pem;
  std::string root_certs_pem;  // empty when no root file was given
  // The leaf's subject, serial and end of validity, for logs: "CN=brigade, serial 1A, valid
  // until ...".
  std::string summary;
  bool expired = false;
};

// Reads and checks the files; INVALID_ARGUMENT (or NOT_FOUND for a missing file) naming the flag.
absl::StatusOr<TlsCredentials> LoadTlsCredentials(const TlsFiles& files);

// The identity of `path` now (following symlinks, as a Kubernetes secret's are); a file that
// cannot be stat'ed has the default identity.
FileIdentity IdentityOf(const std::string& path);

}  // namespace brigade::frontend::tls

#endif  // BRIGADE_FRONTEND_TLS_TLS_CREDENTIALS_H_
