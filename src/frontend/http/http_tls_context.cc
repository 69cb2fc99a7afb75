#include "frontend/http/http_tls_context.h"

#include <exception>
#include <string>

#include "boost/asio/buffer.hpp"
#include "core/strings.h"
#include "openssl/err.h"
#include "openssl/pem.h"
#include "openssl/ssl.h"

namespace brigade::frontend {
namespace {

namespace ssl = boost::asio::ssl;

// Sessions resumed on a context that verifies clients need an id context (OpenSSL refuses to
// resume them otherwise).
constexpr unsigned char kSessionIdContext[] = "brigade-http";

absl::Status Refused(std::string_view what, const boost::system::error_code& error) {
  ERR_clear_error();
  return absl::InvalidArgumentError(StrCat("TLS: ", what, ": ", error.message()));
}

// Each root certificate becomes an acceptable CA name sent in the CertificateRequest.
absl::Status AddClientCaNames(SSL_CTX* context, const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return absl::ResourceExhaustedError("TLS: out of memory");
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    added += SSL_CTX_add_client_CA(context, cert);
    X509_free(cert);
  }
  BIO_free(bio);
  ERR_clear_error();
  if (added == 0) return absl::InvalidArgumentError("TLS: no root certificate to verify clients");
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<ssl::context>> Build(const tls::TlsCredentials& credentials,
                                                    const HttpTlsContext::Options& options) {
  std::shared_ptr<ssl::context> context;
  try {
    context = std::make_shared<ssl::context>(ssl::context::tls_server);
  } catch (const std::exception& error) {
    return absl::ResourceExhaustedError(StrCat("TLS: cannot create a context: ", error.what()));
  }
  SSL_CTX* native = context->native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return absl::InternalError("TLS: cannot set TLS 1.2 as the minimum version");
  }
  SSL_CTX_set_options(
      native, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_session_id_context(native, kSessionIdContext, sizeof(kSessionIdContext) - 1);
  boost::system::error_code error;
  context->use_certificate_chain(boost::asio::buffer(credentials.cert_chain_pem), error);
  if (error) return Refused("the server certificate", error);
  context->use_private_key(boost::asio::buffer(credentials.private_key_pem), ssl::context::pem,
                           error);
  if (error) return Refused("the server key", error);
  if (options.require_client_cert) {
    if (credentials.root_certs_pem.empty()) {
      return absl::InvalidArgumentError(
          "TLS: client certificates are required but no root certificate verifies them");
    }
    context->add_certificate_authority(boost::asio::buffer(credentials.root_certs_pem), error);
    if (error) return Refused("the root certificates", error);
    if (absl::Status status = AddClientCaNames(native, credentials.root_certs_pem); !status.ok()) {
      return status;
    }
    context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, error);
    if (error) return Refused("client verification", error);
  } else {
    context->set_verify_mode(ssl::verify_none, error);
    if (error) return Refused("client verification", error);
  }
  return context;
}

}  // namespace

absl::StatusOr<std::shared_ptr<HttpTlsContext>> HttpTlsContext::Create(
    const tls::TlsCredentials& credentials, Options options) {
  absl::StatusOr<std::shared_ptr<ssl::context>> context = Build(credentials, options);
  if (!context.ok()) return context.status();
  return std::make_shared<HttpTlsContext>(options, *std::move(context));
}

std::shared_ptr<ssl::context> HttpTlsContext::Current() const {
  absl::MutexLock lock(&mu_);
  return context_;
}

absl::Status HttpTlsContext::Update(const tls::TlsCredentials& credentials) {
  absl::StatusOr<std::shared_ptr<ssl::context>> context = Build(credentials, options_);
  if (!context.ok()) return context.status();
  std::shared_ptr<ssl::context> old;
  {
    absl::MutexLock lock(&mu_);
    old = std::exchange(context_, *std::move(context));
  }
  return absl::OkStatus();  // `old` is released outside the lock
}

}  // namespace brigade::frontend
