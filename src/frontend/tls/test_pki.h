#ifndef BRIGADE_FRONTEND_TLS_TEST_PKI_H_
#define BRIGADE_FRONTEND_TLS_TEST_PKI_H_

// Test support: a throwaway PKI made with OpenSSL in memory: a CA, a server certificate it signed
// (for "localhost" and 127.0.0.1) and a client certificate it signed (common name "brigade test
// client", subject alternative names kTestClientUri and kTestClientDns), each with an EC P-256
// key, all PEM. Every call makes new keys. Aborts (a test bug) if OpenSSL fails. Thread-safe.

#include <string>

#include "frontend/tls/tls_credentials.h"

namespace brigade::frontend::tls {

inline constexpr char kTestClientUri[] = "spiffe://brigade.test/client";
inline constexpr char kTestClientDns[] = "client.brigade.test";

struct TestPki {
  std::string ca_cert;
  std::string ca_key;
  std::string server_cert;
  std::string server_key;
  std::string client_cert;
  std::string client_key;
};

// `days` < 0 makes certificates that have already expired.
TestPki MakeTestPki(const std::string& server_name = "localhost", int days = 30);

// The server's side of `pki`: its certificate and key, and the CA as the root for client
// certificates.
TlsCredentials ServerCredentials(const TestPki& pki);

// Writes `text` to `path` (mode 0600); aborts on failure.
void WriteTestFile(const std::string& path, const std::string& text);

}  // namespace brigade::frontend::tls

#endif  // BRIGADE_FRONTEND_TLS_TEST_PKI_H_
