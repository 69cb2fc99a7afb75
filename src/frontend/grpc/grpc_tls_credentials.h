#ifndef BRIGADE_FRONTEND_GRPC_GRPC_TLS_CREDENTIALS_H_
#define BRIGADE_FRONTEND_GRPC_GRPC_TLS_CREDENTIALS_H_

// GrpcTlsCredentials: the gRPC server's TLS credentials (Triton's --grpc-use-ssl family), which
// a rotation can replace while the server runs.
//
//   * TLS 1.2 minimum: gRPC's own floor (grpc_tls_version has nothing older, and 1.51 offers no
//     setter); 1.3 when the client offers it.
//   * `require_client_cert` (Triton's --grpc-use-ssl-mutual): clients must present a
//     certificate that chains to the root certificates (REQUEST_AND_REQUIRE_..._AND_VERIFY);
//     without it none is asked for.
//   * Rotation: TlsServerCredentials with gRPC's FileWatcherCertificateProvider, pointed not at
//     the operator's files but at a private copy that only Update() writes, with credentials
//     TlsCredentialStore has already checked: gRPC 1.51's watcher takes whatever bytes it finds
//     and replaces its handshaker on them, so a bad rotated file read directly would break every
//     new handshake, where this way it never reaches gRPC and the old certificate stays. The
//     watcher reads the copy every `refresh`, so an Update reaches new connections within that;
//     connections already open keep the certificate they handshook with.
//   * The private copy holds no secret on disk. Its directory (0700, under $TMPDIR, named with
//     the process id) holds one generation directory per Update, of symbolic links to
//     `/proc/self/fd/N`, each N an anonymous in-memory file (memfd) this object owns. Each Update
//     writes a new generation and swaps a `current` link to it, so the watcher never reads the
//     key of one generation with the certificate of another. The destructor removes the
//     directory; a process that is killed leaves only links to nothing, and the next Create
//     removes such directories of processes that no longer run.
//
// Thread safety: credentials() from any thread; Update() from one thread at a time.
// Failure: Create returns INTERNAL when the private copy cannot be made; Update returns the
// error and leaves the generation in force.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "frontend/tls/tls_credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace brigade::frontend {

class GrpcTlsCredentials {
 public:
  struct Options {
    bool require_client_cert = false;
    // How often gRPC re-reads the private copy: whole seconds, at least one.
    absl::Duration refresh = absl::Seconds(1);
  };

  static absl::StatusOr<std::unique_ptr<GrpcTlsCredentials>> Create(
      const tls::TlsCredentials& credentials, Options options);
  ~GrpcTlsCredentials();

  GrpcTlsCredentials(const GrpcTlsCredentials&) = delete;
  GrpcTlsCredentials& operator=(const GrpcTlsCredentials&) = delete;

  // For GrpcServer::Options::credentials.
  std::shared_ptr<grpc::ServerCredentials> credentials() const { return credentials_; }

  absl::Status Update(const tls::TlsCredentials& credentials);

  // The private copy's directory, for tests.
  const std::string& directory() const { return directory_; }

  explicit GrpcTlsCredentials(Options options) : options_(options) {}

 private:
  // The in-memory files of one generation: key, certificate chain, root certificates.
  struct Generation {
    int number = 0;
    std::array<int, 3> fds = {-1, -1, -1};
  };

  absl::Status WriteGeneration(const tls::TlsCredentials& credentials);
  static void Close(Generation* generation);

  const Options options_;
  std::shared_ptr<grpc::ServerCredentials> credentials_;
  std::string directory_;
  // Oldest first; at most the two newest are kept (the watcher may still hold the older one).
  std::vector<Generation> generations_;
};

// Removes `<tmp>/brigade-grpc-tls-<pid>-*` directories whose process no longer runs (what a
// killed server leaves: links to nothing). Returns how many it removed.
int RemoveStaleGrpcTlsDirectories(const std::string& tmp);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_GRPC_GRPC_TLS_CREDENTIALS_H_
