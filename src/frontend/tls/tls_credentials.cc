#include "frontend/tls/tls_credentials.h"

#include <errno.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/strings.h"
#include "openssl/bio.h"
#include "openssl/err.h"
#include "openssl/evp.h"
#include "openssl/pem.h"
#include "openssl/x509.h"

namespace brigade::frontend::tls {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;

// OpenSSL's last reason on this thread (its error queue is per thread), then clears the queue.
std::string OpenSslReason() {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return "no PEM data";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

// Refuses to prompt for a passphrase (OpenSSL's default reads the terminal).
int NoPassphrase(char*, int, int, void*) { return 0; }

absl::StatusOr<std::string> ReadFile(const std::string& flag, const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError(StrCat(flag, " is required"));
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(StrCat(flag, " '", path, "': ", std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(StrCat(flag, " '", path, "' is not a regular file"));
  }
  if (static_cast<uint64_t>(info.st_size) > kMaxTlsFileBytes) {
    return absl::InvalidArgumentError(StrCat(flag, " '", path, "' has ", info.st_size,
                                             " bytes; the limit is ", kMaxTlsFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return absl::InvalidArgumentError(StrCat(flag, " '", path, "': cannot read it"));
  }
  return text.str();
}

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Every certificate of a PEM bundle; at least one, and no block that fails to parse.
absl::StatusOr<std::vector<X509Ptr>> ParseCertificates(const std::string& flag,
                                                       const std::string& path,
                                                       const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  std::vector<X509Ptr> certs;
  ERR_clear_error();
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    certs.emplace_back(cert);
  }
  // The loop ends at the end of the data (PEM_R_NO_START_LINE) or at a block that is broken.
  const unsigned long last = ERR_peek_last_error();
  const bool at_end =
      ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
  if (certs.empty() || (last != 0 && !at_end)) {
    const std::string reason = OpenSslReason();
    return absl::InvalidArgumentError(
        StrCat(flag, " '", path,
               "': ", certs.empty() ? "no PEM certificate in it" : "a PEM block does not parse",
               " (", reason, ")"));
  }
  ERR_clear_error();
  return certs;
}

std::string Summary(X509* leaf) {
  std::string subject = "?";
  if (BioPtr out(BIO_new(BIO_s_mem())); out != nullptr) {
    X509_NAME_print_ex(out.get(), X509_get_subject_name(leaf), 0, XN_FLAG_RFC2253);
    BIO_puts(out.get(), ", serial ");
    i2a_ASN1_INTEGER(out.get(), X509_get_serialNumber(leaf));
    BIO_puts(out.get(), ", valid until ");
    ASN1_TIME_print(out.get(), X509_get0_notAfter(leaf));
    char* data = nullptr;
    const long size = BIO_get_mem_data(out.get(), &data);
    if (size > 0) subject.assign(data, static_cast<size_t>(size));
  }
  return subject;
}

}  // namespace

FileIdentity IdentityOf(const std::string& path) {
  struct stat info {};
  if (path.empty() || stat(path.c_str(), &info) != 0) return {};
  return FileIdentity{info.st_ino, info.st_size,
                      int64_t{info.st_mtim.tv_sec} * 1'000'000'000 + info.st_mtim.tv_nsec};
}

absl::StatusOr<TlsCredentials> LoadTlsCredentials(const TlsFiles& files) {
  const std::string cert_flag = StrCat(files.flag_prefix, "-server-cert");
  const std::string key_flag = StrCat(files.flag_prefix, "-server-key");
  const std::string root_flag = StrCat(files.flag_prefix, "-root-cert");
  TlsCredentials out;
  absl::StatusOr<std::string> cert = ReadFile(cert_flag, files.cert_path);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadFile(key_flag, files.key_path);
  if (!key.ok()) return key.status();
  absl::StatusOr<std::vector<X509Ptr>> chain = ParseCertificates(cert_flag, files.cert_path, *cert);
  if (!chain.ok()) return chain.status();

  BioPtr key_bio = MemoryBio(*key);
  ERR_clear_error();
  KeyPtr private_key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, NoPassphrase, nullptr));
  if (private_key == nullptr) {
    return absl::InvalidArgumentError(StrCat(key_flag, " '", files.key_path,
                                             "': no unencrypted PEM private key in it (",
                                             OpenSslReason(), ")"));
  }
  X509* leaf = chain->front().get();
  if (X509_check_private_key(leaf, private_key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(StrCat(key_flag, " '", files.key_path,
                                             "' does not match the certificate of ", cert_flag,
                                             " '", files.cert_path, "'"));
  }
  out.summary = Summary(leaf);
  out.expired = X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0;

  if (!files.root_cert_path.empty()) {
    absl::StatusOr<std::string> roots = ReadFile(root_flag, files.root_cert_path);
    if (!roots.ok()) return roots.status();
    absl::StatusOr<std::vector<X509Ptr>> parsed =
        ParseCertificates(root_flag, files.root_cert_path, *roots);
    if (!parsed.ok()) return parsed.status();
    out.root_certs_pem = *std::move(roots);
  }
  out.cert_chain_pem = *std::move(cert);
  out.private_key_pem = *std::move(key);
  return out;
}

}  // namespace brigade::frontend::tls
