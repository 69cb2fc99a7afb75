#ifndef BRIGADE_FRONTEND_HTTP_HTTP_TLS_CONTEXT_H_
#define BRIGADE_FRONTEND_HTTP_HTTP_TLS_CONTEXT_H_

// HttpTlsContext: the OpenSSL server context (Asio's ssl::context) that HttpServer's new
// connections handshake with, replaceable while the server runs (certificate rotation).
//
//   * TLS 1.2 minimum (1.3 preferred when the client offers it), OpenSSL's default cipher list,
//     no renegotiation, no compression.
//   * `require_client_cert` (mutual TLS): a client must present a certificate that chains to the
//     credentials' root certificates, else the handshake fails; the roots are also sent as the
//     acceptable CA names. Without it no client certificate is asked for.
//   * Update(): builds a new context from new credentials; connections accepted afterwards use
//     it, connections already open keep the one they handshook with (each holds its context).
//     A context that cannot be built leaves the current one in force.
//
// Thread safety: Current() and Update() may be called from any thread (a mutex around a
// shared_ptr). Ownership: Current()'s context lives as long as its holders.
// Failure: Create/Update return INVALID_ARGUMENT with OpenSSL's reason (the credentials were
// checked already, so this means OpenSSL refused them, e.g. a key type it cannot use).

#include <memory>
#include <utility>  // before Asio: Boost 1.74 Asio misses it under C++20 with g++ 12

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio/ssl/context.hpp"
#include "frontend/tls/tls_credentials.h"

namespace brigade::frontend {

class HttpTlsContext {
 public:
  struct Options {
    // Mutual TLS: refuse clients without a certificate signed by the root certificates.
    bool require_client_cert = false;
  };

  static absl::StatusOr<std::shared_ptr<HttpTlsContext>> Create(
      const tls::TlsCredentials& credentials, Options options);

  std::shared_ptr<boost::asio::ssl::context> Current() const;
  absl::Status Update(const tls::TlsCredentials& credentials);

  HttpTlsContext(Options options, std::shared_ptr<boost::asio::ssl::context> context)
      : options_(options), context_(std::move(context)) {}

 private:
  const Options options_;
  mutable absl::Mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> context_ ABSL_GUARDED_BY(mu_);
};

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_HTTP_TLS_CONTEXT_H_
