#ifndef BRIGADE_FRONTEND_TLS_PEER_NAMES_H_
#define BRIGADE_FRONTEND_TLS_PEER_NAMES_H_

// The names a client certificate carries, as access control matches them against the token
// file's `cert:` lines: its subject alternative names of kind DNS, URI and e-mail, in the
// certificate's order, then its subject's common names. A name longer than kMaxPeerNameChars
// or holding a byte outside printable ASCII is left out (the file cannot name it), and at most
// kMaxPeerNames are taken, so a hostile certificate bounds what a request carries.
//
// Pure functions over OpenSSL objects the caller owns; safe from any thread.

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstddef>
#include <string>
#include <vector>

namespace brigade::frontend::tls {

inline constexpr size_t kMaxPeerNames = 32;
inline constexpr size_t kMaxPeerNameChars = 256;

std::vector<std::string> CertificateNames(X509* certificate);

// The names of the certificate `ssl`'s peer presented, when the handshake verified it; empty
// when there was none or it did not verify.
std::vector<std::string> VerifiedPeerNames(SSL* ssl);

}  // namespace brigade::frontend::tls

#endif  // BRIGADE_FRONTEND_TLS_PEER_NAMES_H_
