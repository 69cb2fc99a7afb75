#include "frontend/tls/peer_names.h"

#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/x509v3.h>

#include <string_view>

namespace brigade::frontend::tls {
namespace {

void Add(const ASN1_STRING* text, std::vector<std::string>* names) {
  if (text == nullptr || names->size() == kMaxPeerNames) return;
  const int size = ASN1_STRING_length(text);
  if (size <= 0 || static_cast<size_t>(size) > kMaxPeerNameChars) return;
  const std::string_view bytes(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                               static_cast<size_t>(size));
  for (const char c : bytes) {
    if (c <= 0x20 || c >= 0x7f) return;
  }
  names->emplace_back(bytes);
}

}  // namespace

std::vector<std::string> CertificateNames(X509* certificate) {
  std::vector<std::string> names;
  if (certificate == nullptr) return names;
  auto* alternatives = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  if (alternatives != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(alternatives); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(alternatives, i);
      if (name->type == GEN_DNS || name->type == GEN_URI || name->type == GEN_EMAIL) {
        Add(name->d.ia5, &names);
      }
    }
    GENERAL_NAMES_free(alternatives);
  }
  const X509_NAME* subject = X509_get_subject_name(certificate);
  for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    Add(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i)), &names);
  }
  return names;
}

std::vector<std::string> VerifiedPeerNames(SSL* ssl) {
  if (ssl == nullptr) return {};
  X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return {};
  return CertificateNames(peer);
}

}  // namespace brigade::frontend::tls
