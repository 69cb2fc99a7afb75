#include "net/tls_client_context.h"

#include "core/strings.h"
#include "openssl/err.h"
#include "openssl/ssl.h"

namespace brigade::net {
std::string TakeOpenSslError(std::string_view when_none) {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return std::string(when_none);
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

absl::StatusOr<std::shared_ptr<const TlsClientContext>> TlsClientContext::Create(
    const Options& options) {
  if (options.client_cert_path.empty() != options.client_key_path.empty()) {
    return absl::InvalidArgumentError("a client certificate and its key go together");
  }
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  if (context == nullptr)
    return absl::ResourceExhaustedError("TLS: " + TakeOpenSslError("unknown error"));
  auto out = std::make_shared<TlsClientContext>(context);
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
  const int roots =
      options.root_cert_path.empty()
          ? SSL_CTX_set_default_verify_paths(context)
          : SSL_CTX_load_verify_locations(context, options.root_cert_path.c_str(), nullptr);
  if (roots != 1) {
    return absl::InvalidArgumentError(StrCat("root certificates '", options.root_cert_path,
                                             "': ", TakeOpenSslError("unknown error")));
  }
  if (!options.client_cert_path.empty()) {
    if (SSL_CTX_use_certificate_chain_file(context, options.client_cert_path.c_str()) != 1) {
      return absl::InvalidArgumentError(StrCat("client certificate '", options.client_cert_path,
                                               "': ", TakeOpenSslError("unknown error")));
    }
    if (SSL_CTX_use_PrivateKey_file(context, options.client_key_path.c_str(), SSL_FILETYPE_PEM) !=
            1 ||
        SSL_CTX_check_private_key(context) != 1) {
      return absl::InvalidArgumentError(StrCat("client key '", options.client_key_path,
                                               "': ", TakeOpenSslError("unknown error")));
    }
  }
  return out;
}

TlsClientContext::~TlsClientContext() { SSL_CTX_free(context_); }

}  // namespace brigade::net
