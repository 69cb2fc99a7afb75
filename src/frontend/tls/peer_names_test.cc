#include "frontend/tls/peer_names.h"

#include <memory>
#include <string>
#include <vector>

#include "frontend/tls/test_pki.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "openssl/bio.h"
#include "openssl/pem.h"

namespace brigade::frontend::tls {
namespace {

using ::testing::ElementsAre;

struct X509Free {
  void operator()(X509* certificate) const { X509_free(certificate); }
};

std::unique_ptr<X509, X509Free> Parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* certificate = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return std::unique_ptr<X509, X509Free>(certificate);
}

TEST(CertificateNamesTest, SubjectAlternativeNamesComeFirstThenTheCommonName) {
  const TestPki pki = MakeTestPki("server.brigade.test");
  // DNS then IP (left out: access lines name hosts, not addresses), then the common name.
  EXPECT_THAT(CertificateNames(Parse(pki.server_cert).get()),
              ElementsAre("server.brigade.test", "server.brigade.test"));
}

TEST(CertificateNamesTest, ACommonNameWithSpacesIsLeftOut) {
  const TestPki pki = MakeTestPki();
  // "brigade test client" cannot be written in the token file.
  EXPECT_THAT(CertificateNames(Parse(pki.client_cert).get()),
              ElementsAre(kTestClientUri, kTestClientDns));
}

TEST(CertificateNamesTest, NoCertificateHasNoNames) {
  EXPECT_TRUE(CertificateNames(nullptr).empty());
  EXPECT_TRUE(VerifiedPeerNames(nullptr).empty());
}

}  // namespace
}  // namespace brigade::frontend::tls
