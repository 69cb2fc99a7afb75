#ifndef BRIGADE_FRONTEND_AUTH_TOKEN_STORE_H_
#define BRIGADE_FRONTEND_AUTH_TOKEN_STORE_H_

// TokenStore: the token file (`--auth-token-file`, format in token_set.h) and the TokenSet last
// read from it, reloaded without a restart.
//
//   * Mode check, as ssh does for private keys: the file must be a regular file owned by the
//     server's user (or root) that neither its group nor others may read or write; otherwise it
//     is refused (FAILED_PRECONDITION naming the mode and the chmod that fixes it).
//   * Reload(): reads the file again now (`brigade serve` calls it on SIGHUP).
//     ReloadIfChanged(): only when the file's inode, size or modification time changed since the
//     last read (`brigade serve` calls it once a second). A file that fails a check or does not
//     parse leaves the tokens in force unchanged; the call returns the error (the caller logs it).
//     ReloadIfChanged() tries a bad file again once it changes again; Reload() always reads.
//
// Thread safety: every method may be called from any thread. Current() is a shared_ptr copy under
// a mutex; the file is read and parsed outside it, so a reload never blocks a request.
// Ownership: Current()'s set stays valid for as long as the caller holds it, across reloads.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "frontend/auth/token_set.h"

namespace brigade::frontend::auth {

// The bytes of a file that only its owner may read: a regular file, owned by this process's
// effective user or root, without group or other permission bits, at most `max_bytes` long.
// Also the identity of what was read, to notice a change later.
struct PrivateFile {
  std::string text;
  ino_t inode = 0;
  int64_t size = 0;
  int64_t mtime_ns = 0;
};
absl::StatusOr<PrivateFile> ReadPrivateFile(const std::string& path, size_t max_bytes);

class TokenStore {
 public:
  // Reads and checks `path`; any failure is returned (the server refuses to start).
  static absl::StatusOr<std::unique_ptr<TokenStore>> Create(std::string path);

  std::shared_ptr<const TokenSet> Current() const;

  absl::Status Reload();
  // OK and false when the file is unchanged; true when a changed file was read in.
  absl::StatusOr<bool> ReloadIfChanged();

  const std::string& path() const { return path_; }

  explicit TokenStore(std::string path) : path_(std::move(path)) {}

 private:
  absl::Status Load(PrivateFile file);

  const std::string path_;
  // Serializes reloads and so orders them; held across the file read on purpose: no request
  // ever takes it (requests take only mu_, which is never held across I/O).
  absl::Mutex reload_mu_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const TokenSet> current_ ABSL_GUARDED_BY(mu_);
  // Identity of the last file read, good or bad, so a bad file is not re-read every second.
  ino_t inode_ ABSL_GUARDED_BY(reload_mu_) = 0;
  int64_t size_ ABSL_GUARDED_BY(reload_mu_) = -1;
  int64_t mtime_ns_ ABSL_GUARDED_BY(reload_mu_) = -1;
};

}  // namespace brigade::frontend::auth

#endif  // BRIGADE_FRONTEND_AUTH_TOKEN_STORE_H_
