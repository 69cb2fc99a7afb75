#include "tools/serve_tls.h"

#include <utility>

#include "core/strings.h"
#include "spdlog/spdlog.h"

namespace brigade::tools {

void AddTlsFlags(CLI::App* serve, TlsFlags* tls, const char* protocol) {
  const std::string& p = tls->prefix;
  serve
      ->add_option(p + "-use-ssl", tls->use_ssl,
                   StrCat("Serve ", protocol, " over TLS (1.2 or later; needs ", p,
                          "-server-cert and ", p, "-server-key)"))
      ->capture_default_str();
  serve->add_option(p + "-server-cert", tls->server_cert,
                    StrCat("PEM certificate chain of the ", protocol, " port, leaf first"));
  serve->add_option(p + "-server-key", tls->server_key,
                    StrCat("PEM private key (unencrypted) of ", p, "-server-cert"));
  serve->add_option(p + "-root-cert", tls->root_cert,
                    StrCat("PEM root certificates that ", protocol,
                           " client certificates must chain to (with ", p, "-use-ssl-mutual)"));
  serve
      ->add_option(p + "-use-ssl-mutual", tls->mutual,
                   StrCat("Mutual TLS on the ", protocol, " port: clients must present a ",
                          "certificate signed by ", p, "-root-cert (implies ", p, "-use-ssl)"))
      ->capture_default_str();
}

bool TlsFlagsSet(const TlsFlags& tls) {
  return tls.use_ssl || tls.mutual || !tls.server_cert.empty() || !tls.server_key.empty() ||
         !tls.root_cert.empty();
}

absl::StatusOr<std::unique_ptr<frontend::tls::TlsCredentialStore>> OpenTls(const TlsFlags& tls) {
  const bool on = tls.use_ssl || tls.mutual;  // as Triton, -use-ssl-mutual implies -use-ssl
  if (!on) {
    for (const auto& [flag, value] :
         {std::pair{"-server-cert", &tls.server_cert}, std::pair{"-server-key", &tls.server_key},
          std::pair{"-root-cert", &tls.root_cert}}) {
      if (!value->empty()) {
        return absl::InvalidArgumentError(
            StrCat(tls.prefix, flag, " is set but TLS is off: add ", tls.prefix,
                   "-use-ssl=true (or drop the certificate flags) rather than serve plain text"));
      }
    }
    return nullptr;
  }
  if (tls.server_cert.empty() || tls.server_key.empty()) {
    return absl::InvalidArgumentError(StrCat(tls.prefix, "-use-ssl needs ", tls.prefix,
                                             "-server-cert and ", tls.prefix, "-server-key"));
  }
  if (tls.mutual && tls.root_cert.empty()) {
    return absl::InvalidArgumentError(StrCat(tls.prefix, "-use-ssl-mutual needs ", tls.prefix,
                                             "-root-cert to verify client certificates"));
  }
  // Roots matter only to verify clients; without mutual TLS they are not read.
  frontend::tls::TlsFiles files{tls.server_cert, tls.server_key,
                                tls.mutual ? tls.root_cert : std::string(), tls.prefix};
  absl::StatusOr<std::unique_ptr<frontend::tls::TlsCredentialStore>> store =
      frontend::tls::TlsCredentialStore::Create(std::move(files));
  if (!store.ok()) return store.status();
  const frontend::tls::TlsCredentials& current = (*store)->current();
  spdlog::info("tls: {} certificate {}{}", tls.prefix, current.summary,
               tls.mutual ? "; client certificates required" : "");
  if (current.expired) spdlog::warn("tls: the {}-server-cert certificate has expired", tls.prefix);
  return store;
}

void ReloadTls(const TlsReload& reload, bool always) {
  if (reload.store == nullptr) return;
  const std::string& prefix = reload.store->files().flag_prefix;
  if (always) {
    const absl::Status status = reload.store->Reload(reload.apply);
    if (status.ok()) {
      spdlog::info("tls: SIGHUP: {} certificate {}", prefix, reload.store->current().summary);
    } else {
      spdlog::error("tls: SIGHUP: keeping the {} certificate in force: {}", prefix,
                    status.message());
    }
    return;
  }
  absl::StatusOr<bool> changed = reload.store->ReloadIfChanged(reload.apply);
  if (!changed.ok()) {
    spdlog::error("tls: the {} certificate files changed; keeping the certificate in force: {}",
                  prefix, changed.status().message());
  } else if (*changed) {
    spdlog::info("tls: the {} certificate files changed: now {}", prefix,
                 reload.store->current().summary);
  }
}

}  // namespace brigade::tools
