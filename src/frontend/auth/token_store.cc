#include "frontend/auth/token_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::frontend::auth {
namespace {

int64_t MtimeNs(const struct stat& info) {
  return int64_t{info.st_mtim.tv_sec} * 1'000'000'000 + info.st_mtim.tv_nsec;
}

std::string OctalMode(mode_t mode) {
  std::string out = "0000";
  for (int i = 3; i >= 0; --i) {
    out[i] = static_cast<char>('0' + (mode & 07));
    mode >>= 3;
  }
  return out;
}

absl::Status CheckPrivate(const std::string& path, const struct stat& info) {
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(StrCat("'", path, "' is not a regular file"));
  }
  if (info.st_uid != geteuid() && info.st_uid != 0) {
    return absl::FailedPreconditionError(StrCat("'", path, "' is owned by uid ", info.st_uid,
                                                ", not by this server's user (uid ", geteuid(),
                                                ") or root"));
  }
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return absl::FailedPreconditionError(
        StrCat("'", path, "' has mode ", OctalMode(info.st_mode & 07777),
               ": its group or others may read or write it; run chmod 600 '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PrivateFile> ReadPrivateFile(const std::string& path, size_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(StrCat("cannot open '", path, "': ", std::strerror(errno)));
  }
  struct stat info {};
  absl::Status checked = fstat(fd, &info) == 0
                             ? CheckPrivate(path, info)
                             : absl::InternalError(StrCat("cannot stat '", path, "'"));
  if (checked.ok() && static_cast<uint64_t>(info.st_size) > max_bytes) {
    checked = absl::InvalidArgumentError(
        StrCat("'", path, "' has ", info.st_size, " bytes; the limit is ", max_bytes));
  }
  if (!checked.ok()) {
    close(fd);
    return checked;
  }
  PrivateFile file;
  file.inode = info.st_ino;
  file.size = info.st_size;
  file.mtime_ns = MtimeNs(info);
  // One byte past the limit tells a file that grew since fstat from one that did not.
  file.text.resize(max_bytes + 1);
  size_t read_bytes = 0;
  while (read_bytes < file.text.size()) {
    const ssize_t n = read(fd, file.text.data() + read_bytes, file.text.size() - read_bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return absl::InternalError(StrCat("cannot read '", path, "': ", std::strerror(error)));
    }
    if (n == 0) break;
    read_bytes += static_cast<size_t>(n);
  }
  close(fd);
  if (read_bytes > max_bytes) {
    return absl::InvalidArgumentError(StrCat("'", path, "' is over ", max_bytes, " bytes"));
  }
  file.text.resize(read_bytes);
  return file;
}

absl::StatusOr<std::unique_ptr<TokenStore>> TokenStore::Create(std::string path) {
  auto store = std::make_unique<TokenStore>(std::move(path));
  BRIGADE_RETURN_IF_ERROR(store->Reload());
  return store;
}

std::shared_ptr<const TokenSet> TokenStore::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

absl::Status TokenStore::Load(PrivateFile file) {
  absl::StatusOr<TokenSet> parsed = TokenSet::Parse(file.text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(StrCat("'", path_, "': ", parsed.status().message()));
  }
  auto set = std::make_shared<const TokenSet>(*std::move(parsed));
  absl::MutexLock lock(&mu_);
  current_ = std::move(set);
  return absl::OkStatus();
}

absl::Status TokenStore::Reload() {
  absl::MutexLock reload(&reload_mu_);
  absl::StatusOr<PrivateFile> file = ReadPrivateFile(path_, kMaxTokenFileBytes);
  if (!file.ok()) return file.status();
  inode_ = file->inode;
  size_ = file->size;
  mtime_ns_ = file->mtime_ns;
  return Load(*std::move(file));
}

absl::StatusOr<bool> TokenStore::ReloadIfChanged() {
  absl::MutexLock reload(&reload_mu_);
  struct stat info {};
  if (stat(path_.c_str(), &info) != 0) {
    return absl::NotFoundError(StrCat("cannot stat '", path_, "': ", std::strerror(errno)));
  }
  if (info.st_ino == inode_ && info.st_size == size_ && MtimeNs(info) == mtime_ns_) return false;
  // Remembered before reading, so a bad file is reported once, not every second.
  inode_ = info.st_ino;
  size_ = info.st_size;
  mtime_ns_ = MtimeNs(info);
  absl::StatusOr<PrivateFile> file = ReadPrivateFile(path_, kMaxTokenFileBytes);
  if (!file.ok()) return file.status();
  BRIGADE_RETURN_IF_ERROR(Load(*std::move(file)));
  return true;
}

}  // namespace brigade::frontend::auth
