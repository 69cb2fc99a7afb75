#ifndef BRIGADE_FRONTEND_TLS_TLS_CREDENTIAL_STORE_H_
#define BRIGADE_FRONTEND_TLS_TLS_CREDENTIAL_STORE_H_

// TlsCredentialStore: one front end's certificate files (TlsFiles) and the credentials last
// read from them, reloaded without a restart (certificate rotation).
//
//   * Create() reads and checks the files (tls_credentials.h); any failure is returned and the
//     server refuses to start.
//   * ReloadIfChanged(apply): when any of the files' inode, size or modification time changed
//     since the last read (a rotation: `brigade serve` asks every --tls-reload-secs), reads and
//     checks them again and hands the result to `apply` (which builds the front end's new TLS
//     context). Reload(apply) does the same whatever changed (SIGHUP).
//   * A rotated file that fails a check, or that `apply` refuses, leaves the credentials in
//     force unchanged (the front end keeps serving with them); the error is returned for the
//     caller to log. ReloadIfChanged tries a bad file again only once it changes again, so a
//     half-written rotation (a new certificate whose key is not there yet) is read again as soon
//     as the key arrives.
//
// Thread safety: none; one owner calls it (`brigade serve`'s main loop). `apply` runs on the
// caller's thread.

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frontend/tls/tls_credentials.h"

namespace brigade::frontend::tls {

class TlsCredentialStore {
 public:
  // Takes new credentials into use; a non-OK status keeps the old ones.
  using Apply = std::function<absl::Status(const TlsCredentials&)>;

  static absl::StatusOr<std::unique_ptr<TlsCredentialStore>> Create(TlsFiles files);

  const TlsCredentials& current() const { return current_; }
  const TlsFiles& files() const { return files_; }

  absl::Status Reload(const Apply& apply);
  // OK and false when no file changed; true when changed files were read and applied.
  absl::StatusOr<bool> ReloadIfChanged(const Apply& apply);

  explicit TlsCredentialStore(TlsFiles files) : files_(std::move(files)) {}

 private:
  struct Identities {
    FileIdentity cert, key, root;
    bool operator==(const Identities&) const = default;
  };
  Identities Now() const;

  const TlsFiles files_;
  TlsCredentials current_;
  // Of the files last read, good or bad.
  Identities read_;
};

}  // namespace brigade::frontend::tls

#endif  // BRIGADE_FRONTEND_TLS_TLS_CREDENTIAL_STORE_H_
