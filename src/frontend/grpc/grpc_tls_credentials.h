#ifndef BRIGADE_FRONTEND_GRPC_GRPC_TLS_CREDENTIALS_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_TLS_CREDENTIALS_H_

// GrpcTlsCredentials: the gRPC server's TLS credentials (Triton's --grpc-use-ssl family), fixed
// or rotated while the server runs.
//
//   * TLS 1.2 minimum: gRPC's own floor (grpc_tls_version has nothing older, and 1.51 offers no
//     setter); 1.3 when the client offers it.
//   * `require_client_cert` (Triton's --grpc-use-ssl-mutual): clients must present a
//     certificate that chains to the root certificates (REQUEST_AND_REQUIRE_..._AND_VERIFY);
//     without it none is asked for.
//   * `refresh_secs` == 0: SslServerCredentials over the PEMs in memory, fixed for the server's
//     life (Update() answers FAILED_PRECONDITION).
//   * `refresh_secs` > 0: TlsServerCredentials with gRPC's FileWatcherCertificateProvider. The
//     provider is pointed not at the operator's files but at a private copy (a 0700 directory
//     under $TMPDIR, removed by the destructor) that only Update() writes, with credentials
//     TlsCredentialStore has already checked: gRPC 1.51's watcher takes whatever bytes it finds
//     and replaces its handshaker on them, so a bad rotated file read directly would break every
//     new handshake, where this way it never reaches gRPC and the old certificate stays. Each
//     Update() writes a new generation directory and swaps a symlink to it, so the watcher
//     never sees a key of one generation with the certificate of another; it reads the copy
//     every `refresh_secs`, so a rotation reaches new connections within that. Connections
//     already open keep the certificate they handshook with.
//
// Thread safety: credentials() from any thread; Update() from one thread at a time.
// Failure: Create returns INTERNAL when the private copy cannot be written; Update returns the
// error and leaves the generation in force.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frontend/tls/tls_credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace brigade::frontend {

class GrpcTlsCredentials {
 public:
  struct Options {
    bool require_client_cert = false;
    // 0: fixed credentials; > 0: rotated through the watched private copy, read this often.
    int refresh_secs = 0;
  };

  static absl::StatusOr<std::unique_ptr<GrpcTlsCredentials>> Create(
      const tls::TlsCredentials& credentials, Options options);
  ~GrpcTlsCredentials();

  GrpcTlsCredentials(const GrpcTlsCredentials&) = delete;
  GrpcTlsCredentials& operator=(const GrpcTlsCredentials&) = delete;

  // For GrpcServer::Options::credentials.
  std::shared_ptr<grpc::ServerCredentials> credentials() const { return credentials_; }

  absl::Status Update(const tls::TlsCredentials& credentials);

  // The private copy's directory ("" when refresh_secs == 0), for tests.
  const std::string& directory() const { return directory_; }

  explicit GrpcTlsCredentials(Options options) : options_(options) {}

 private:
  absl::Status WriteGeneration(const tls::TlsCredentials& credentials);

  const Options options_;
  std::shared_ptr<grpc::ServerCredentials> credentials_;
  std::string directory_;
  int generation_ = 0;
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_TLS_CREDENTIALS_H_
