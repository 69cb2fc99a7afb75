#include "frontend/tls/test_pki.h"

#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "core/strings.h"
#include "openssl/evp.h"
#include "openssl/pem.h"
#include "openssl/x509.h"
#include "openssl/x509v3.h"

namespace brigade::frontend::tls {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "MakeTestPki: %s failed\n", what);
    std::abort();
  }
}

struct Key {
  EVP_PKEY* key = nullptr;
  ~Key() { EVP_PKEY_free(key); }
};
struct Cert {
  X509* cert = nullptr;
  ~Cert() { X509_free(cert); }
};

void NewKey(Key* out) {
  out->key = EVP_EC_gen("P-256");
  Check(out->key != nullptr, "EVP_EC_gen");
}

std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  Check(PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM_write_bio_PrivateKey");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(size));
  BIO_free(bio);
  return out;
}

std::string CertPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  Check(PEM_write_bio_X509(bio, cert) == 1, "PEM_write_bio_X509");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(size));
  BIO_free(bio);
  return out;
}

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  Check(extension != nullptr, "X509V3_EXT_conf_nid");
  X509_add_ext(cert, extension, -1);
  X509_EXTENSION_free(extension);
}

// A certificate for `key` named `cn`, signed by `issuer_key` (`issuer` null: self-signed).
void MakeCert(Cert* out, EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key,
              bool ca, const std::string& san, int days, long serial) {
  out->cert = X509_new();
  X509* cert = out->cert;
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  const long day_secs = 24L * 3600;
  if (days >= 0) {
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), days * day_secs);
  } else {
    X509_gmtime_adj(X509_getm_notBefore(cert), (days - 1) * day_secs);
    X509_gmtime_adj(X509_getm_notAfter(cert), days * day_secs);
  }
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, issuer != nullptr ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer != nullptr ? issuer : cert;
  AddExtension(cert, signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (ca) AddExtension(cert, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  if (!san.empty()) AddExtension(cert, signer, NID_subject_alt_name, san.c_str());
  Check(X509_sign(cert, issuer_key, EVP_sha256()) > 0, "X509_sign");
}

}  // namespace

TestPki MakeTestPki(const std::string& server_name, int days) {
  static std::atomic<long> serial{1};
  Key ca_key, server_key, client_key;
  NewKey(&ca_key);
  NewKey(&server_key);
  NewKey(&client_key);
  Cert ca, server, client;
  MakeCert(&ca, ca_key.key, "brigade test CA", nullptr, ca_key.key, true, "", 30, serial++);
  MakeCert(&server, server_key.key, server_name, ca.cert, ca_key.key, false,
           "DNS:" + server_name + ",IP:127.0.0.1", days, serial++);
  MakeCert(&client, client_key.key, "brigade test client", ca.cert, ca_key.key, false,
           StrCat("URI:", kTestClientUri, ",DNS:", kTestClientDns), days, serial++);
  return TestPki{CertPem(ca.cert),       KeyPem(ca_key.key),   CertPem(server.cert),
                 KeyPem(server_key.key), CertPem(client.cert), KeyPem(client_key.key)};
}

void WriteTestFile(const std::string& path, const std::string& text) {
  // Replaced, not rewritten in place: a new inode, as a rotation by rename gives.
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    Check(out.good(), "writing a test file");
  }
  chmod(temp.c_str(), 0600);
  Check(std::rename(temp.c_str(), path.c_str()) == 0, "rename");
}

TlsCredentials ServerCredentials(const TestPki& pki) {
  TlsCredentials credentials;
  credentials.cert_chain_pem = pki.server_cert;
  credentials.private_key_pem = pki.server_key;
  credentials.root_certs_pem = pki.ca_cert;
  return credentials;
}

}  // namespace brigade::frontend::tls
