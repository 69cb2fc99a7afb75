#ifndef BRIGADE_NET_TLS_CLIENT_CONTEXT_H_
#define BRIGADE_NET_TLS_CLIENT_CONTEXT_H_

// TlsClientContext: what HttpConnection needs to speak HTTPS: an OpenSSL client context (TLS 1.2
// or later) that verifies the server's certificate against `root_cert_path` (or the system's
// roots when empty) and its name against the host connected to, and presents a client
// certificate for mutual TLS when one is given.
//
// Thread safety: immutable once created; shared by any number of connections on any threads.
// Failure: Create returns INVALID_ARGUMENT naming the file OpenSSL refused (and why), and for a
// certificate given without its key or the other way round.

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace brigade::net {

class TlsClientContext {
 public:
  struct Options {
    std::string root_cert_path;    // PEM roots for the server's certificate; "": the system's
    std::string client_cert_path;  // PEM client certificate chain (mutual TLS), with...
    std::string client_key_path;   // ... its unencrypted PEM key
  };

  static absl::StatusOr<std::shared_ptr<const TlsClientContext>> Create(const Options& options);
  ~TlsClientContext();

  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  SSL_CTX* native() const { return context_; }

  explicit TlsClientContext(SSL_CTX* context) : context_(context) {}

 private:
  SSL_CTX* const context_;
};

// The reason text of the last error OpenSSL queued on this thread, which it clears (the queue is
// per thread and would otherwise explain a later failure); `when_none` if nothing is queued.
std::string TakeOpenSslError(std::string_view when_none);

}  // namespace brigade::net

#endif  // BRIGADE_NET_TLS_CLIENT_CONTEXT_H_
