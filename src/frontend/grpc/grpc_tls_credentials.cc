#include "frontend/grpc/grpc_tls_credentials.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "core/strings.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace brigade::frontend {
namespace {

constexpr char kCurrent[] = "current";

std::string GenerationName(int generation) { return StrCat("g", generation); }

absl::Status WriteFile(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InternalError(StrCat("cannot create ", path, ": ", strerror(errno)));
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return absl::InternalError(StrCat("cannot write ", path, ": ", strerror(error)));
    }
    written += static_cast<size_t>(n);
  }
  if (close(fd) != 0) return absl::InternalError(StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcTlsCredentials>> GrpcTlsCredentials::Create(
    const tls::TlsCredentials& credentials, Options options) {
  if (options.refresh_secs < 0) {
    return absl::InvalidArgumentError("grpc TLS refresh_secs must be >= 0");
  }
  if (options.require_client_cert && credentials.root_certs_pem.empty()) {
    return absl::InvalidArgumentError(
        "--grpc-use-ssl-mutual needs --grpc-root-cert to verify client certificates");
  }
  const grpc_ssl_client_certificate_request_type request =
      options.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                  : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  auto out = std::make_unique<GrpcTlsCredentials>(options);
  if (options.refresh_secs == 0) {
    grpc::SslServerCredentialsOptions ssl(request);
    if (options.require_client_cert) ssl.pem_root_certs = credentials.root_certs_pem;
    ssl.pem_key_cert_pairs.push_back({credentials.private_key_pem, credentials.cert_chain_pem});
    out->credentials_ = grpc::SslServerCredentials(ssl);
    return out;
  }

  const char* tmp = getenv("TMPDIR");
  std::string pattern =
      StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/brigade-grpc-tls-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {  // mode 0700
    return absl::InternalError(
        StrCat("cannot create a directory for the gRPC certificates: ", strerror(errno)));
  }
  out->directory_ = pattern;
  if (absl::Status status = out->WriteGeneration(credentials); !status.ok()) return status;
  const std::string current = StrCat(out->directory_, "/", kCurrent, "/");
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      current + "key.pem", current + "cert.pem",
      options.require_client_cert ? current + "ca.pem" : std::string(),
      static_cast<unsigned int>(options.refresh_secs));
  grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_identity_key_cert_pairs();
  if (options.require_client_cert) tls.watch_root_certs();
  tls.set_cert_request_type(request);
  out->credentials_ = grpc::experimental::TlsServerCredentials(tls);
  if (out->credentials_ == nullptr) {
    return absl::InternalError("gRPC refused the TLS server credentials");
  }
  return out;
}

GrpcTlsCredentials::~GrpcTlsCredentials() {
  if (directory_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

absl::Status GrpcTlsCredentials::Update(const tls::TlsCredentials& credentials) {
  if (directory_.empty()) {
    return absl::FailedPreconditionError("the gRPC certificates are fixed (refresh_secs == 0)");
  }
  if (options_.require_client_cert && credentials.root_certs_pem.empty()) {
    return absl::InvalidArgumentError("the new credentials have no root certificate");
  }
  return WriteGeneration(credentials);
}

absl::Status GrpcTlsCredentials::WriteGeneration(const tls::TlsCredentials& credentials) {
  const int generation = generation_ + 1;
  const std::string name = GenerationName(generation);
  const std::string dir = StrCat(directory_, "/", name);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InternalError(StrCat("cannot create ", dir, ": ", strerror(errno)));
  }
  absl::Status status = WriteFile(StrCat(dir, "/key.pem"), credentials.private_key_pem);
  if (status.ok()) status = WriteFile(StrCat(dir, "/cert.pem"), credentials.cert_chain_pem);
  if (status.ok()) status = WriteFile(StrCat(dir, "/ca.pem"), credentials.root_certs_pem);
  // The swap: a new symlink renamed over the old one, atomically.
  const std::string link = StrCat(directory_, "/", kCurrent, ".new");
  const std::string current = StrCat(directory_, "/", kCurrent);
  if (status.ok()) {
    unlink(link.c_str());
    if (symlink(name.c_str(), link.c_str()) != 0 || rename(link.c_str(), current.c_str()) != 0) {
      status = absl::InternalError(StrCat("cannot switch ", current, ": ", strerror(errno)));
    }
  }
  std::error_code ignored;
  if (!status.ok()) {
    std::filesystem::remove_all(dir, ignored);
    return status;
  }
  generation_ = generation;
  // The generation before the last may still be open in the watcher's hands: keep it; drop the
  // one before that.
  if (generation > 2) {
    std::filesystem::remove_all(StrCat(directory_, "/", GenerationName(generation - 2)), ignored);
  }
  return absl::OkStatus();
}

}  // namespace brigade::frontend
