#include "frontend/tls/tls_credential_store.h"

#include <utility>

namespace brigade::frontend::tls {

absl::StatusOr<std::unique_ptr<TlsCredentialStore>> TlsCredentialStore::Create(TlsFiles files) {
  auto store = std::make_unique<TlsCredentialStore>(std::move(files));
  store->read_ = store->Now();
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(store->files_);
  if (!loaded.ok()) return loaded.status();
  store->current_ = *std::move(loaded);
  return store;
}

TlsCredentialStore::Identities TlsCredentialStore::Now() const {
  return Identities{IdentityOf(files_.cert_path), IdentityOf(files_.key_path),
                    IdentityOf(files_.root_cert_path)};
}

absl::Status TlsCredentialStore::Reload(const Apply& apply) {
  // Taken before reading, so a file replaced during the read is read again next time.
  read_ = Now();
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(files_);
  if (!loaded.ok()) return loaded.status();
  if (absl::Status applied = apply(*loaded); !applied.ok()) return applied;
  current_ = *std::move(loaded);
  return absl::OkStatus();
}

absl::StatusOr<bool> TlsCredentialStore::ReloadIfChanged(const Apply& apply) {
  if (Now() == read_) return false;
  if (absl::Status status = Reload(apply); !status.ok()) return status;
  return true;
}

}  // namespace brigade::frontend::tls
