#include "frontend/grpc/grpc_tls_credentials.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/strings.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace brigade::frontend {
namespace {

constexpr char kCurrent[] = "current";
constexpr std::string_view kDirectoryPrefix = "brigade-grpc-tls-";
// The generation's files, in Generation::fds order.
constexpr std::array<const char*, 3> kFileNames = {"key.pem", "cert.pem", "ca.pem"};

std::string GenerationName(int generation) { return StrCat("g", generation); }

std::string TempDirectory() {
  const char* tmp = getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// An anonymous in-memory file holding `text`; -1 with errno on failure.
int MemoryFile(const char* name, const std::string& text) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      errno = error;
      return -1;
    }
    written += static_cast<size_t>(n);
  }
  return fd;
}

}  // namespace

int RemoveStaleGrpcTlsDirectories(const std::string& tmp) {
  DIR* dir = opendir(tmp.c_str());
  if (dir == nullptr) return 0;
  std::vector<std::string> stale;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with(kDirectoryPrefix)) continue;
    const std::string_view rest = name.substr(kDirectoryPrefix.size());
    pid_t pid = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (error != std::errc() || pid <= 0 || end == rest.data() + rest.size() || *end != '-') {
      continue;
    }
    // Only a directory of ours (not a link someone planted) whose process is gone.
    struct stat info;
    const std::string path = StrCat(tmp, "/", name);
    if (lstat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != getuid()) {
      continue;
    }
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    stale.push_back(path);
  }
  closedir(dir);
  int removed = 0;
  for (const std::string& path : stale) {
    std::error_code error;
    if (std::filesystem::remove_all(path, error) > 0 && !error) ++removed;
  }
  return removed;
}

absl::StatusOr<std::unique_ptr<GrpcTlsCredentials>> GrpcTlsCredentials::Create(
    const tls::TlsCredentials& credentials, Options options) {
  if (options.refresh < absl::Seconds(1) ||
      options.refresh != absl::Seconds(absl::ToInt64Seconds(options.refresh))) {
    return absl::InvalidArgumentError("grpc TLS refresh must be a whole number of seconds >= 1");
  }
  if (options.require_client_cert && credentials.root_certs_pem.empty()) {
    return absl::InvalidArgumentError(
        "--grpc-use-ssl-mutual needs --grpc-root-cert to verify client certificates");
  }
  const std::string tmp = TempDirectory();
  RemoveStaleGrpcTlsDirectories(tmp);
  std::string pattern = StrCat(tmp, "/", kDirectoryPrefix, getpid(), "-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {  // mode 0700
    return absl::InternalError(
        StrCat("cannot create a directory for the gRPC certificates: ", strerror(errno)));
  }
  auto out = std::make_unique<GrpcTlsCredentials>(options);
  out->directory_ = pattern;
  if (absl::Status status = out->WriteGeneration(credentials); !status.ok()) return status;
  const std::string current = StrCat(out->directory_, "/", kCurrent, "/");
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      current + kFileNames[0], current + kFileNames[1],
      options.require_client_cert ? current + kFileNames[2] : std::string(),
      static_cast<unsigned int>(absl::ToInt64Seconds(options.refresh)));
  grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_identity_key_cert_pairs();
  if (options.require_client_cert) tls.watch_root_certs();
  tls.set_cert_request_type(options.require_client_cert
                                ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  out->credentials_ = grpc::experimental::TlsServerCredentials(tls);
  if (out->credentials_ == nullptr) {
    return absl::InternalError("gRPC refused the TLS server credentials");
  }
  return out;
}

GrpcTlsCredentials::~GrpcTlsCredentials() {
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
  for (Generation& generation : generations_) Close(&generation);
}

void GrpcTlsCredentials::Close(Generation* generation) {
  for (int& fd : generation->fds) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

absl::Status GrpcTlsCredentials::Update(const tls::TlsCredentials& credentials) {
  if (options_.require_client_cert && credentials.root_certs_pem.empty()) {
    return absl::InvalidArgumentError("the new credentials have no root certificate");
  }
  return WriteGeneration(credentials);
}

absl::Status GrpcTlsCredentials::WriteGeneration(const tls::TlsCredentials& credentials) {
  Generation next{.number = generations_.empty() ? 1 : generations_.back().number + 1};
  const std::string name = GenerationName(next.number);
  const std::string dir = StrCat(directory_, "/", name);
  absl::Status status;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    status = absl::InternalError(StrCat("cannot create ", dir, ": ", strerror(errno)));
  }
  const std::array<const std::string*, 3> texts = {
      &credentials.private_key_pem, &credentials.cert_chain_pem, &credentials.root_certs_pem};
  for (size_t i = 0; i < kFileNames.size() && status.ok(); ++i) {
    next.fds[i] = MemoryFile(kFileNames[i], *texts[i]);
    const std::string path = StrCat(dir, "/", kFileNames[i]);
    if (next.fds[i] < 0 ||
        symlink(StrCat("/proc/self/fd/", next.fds[i]).c_str(), path.c_str()) != 0) {
      status = absl::InternalError(StrCat("cannot write ", path, ": ", strerror(errno)));
    }
  }
  // The swap: a new link renamed over the old one, atomically.
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
    Close(&next);
    return status;
  }
  generations_.push_back(next);
  // The generation before the last may still be open in the watcher's hands: keep it; drop the
  // one before that.
  while (generations_.size() > 2) {
    std::filesystem::remove_all(StrCat(directory_, "/", GenerationName(generations_[0].number)),
                                ignored);
    Close(&generations_[0]);
    generations_.erase(generations_.begin());
  }
  return absl::OkStatus();
}

}  // namespace brigade::frontend
