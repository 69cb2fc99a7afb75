#include "frontend/tls/tls_credentials.h"

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "frontend/tls/test_pki.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::frontend::tls {
namespace {

using ::testing::HasSubstr;

class TlsCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/brigade-tls-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    pki_ = MakeTestPki();
    WriteTestFile(Path("cert.pem"), pki_.server_cert);
    WriteTestFile(Path("key.pem"), pki_.server_key);
    WriteTestFile(Path("ca.pem"), pki_.ca_cert);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  TlsFiles Files() const {
    return TlsFiles{Path("cert.pem"), Path("key.pem"), Path("ca.pem"), "--http"};
  }

  std::string dir_;
  TestPki pki_;
};

TEST_F(TlsCredentialsTest, ReadsAMatchingCertificateKeyAndRoots) {
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(Files());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->cert_chain_pem, pki_.server_cert);
  EXPECT_EQ(loaded->private_key_pem, pki_.server_key);
  EXPECT_EQ(loaded->root_certs_pem, pki_.ca_cert);
  EXPECT_THAT(loaded->summary, HasSubstr("CN=localhost"));
  EXPECT_FALSE(loaded->expired);
}

TEST_F(TlsCredentialsTest, RootsAreOptional) {
  TlsFiles files = Files();
  files.root_cert_path.clear();
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(files);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->root_certs_pem.empty());
}

TEST_F(TlsCredentialsTest, AMissingFileNamesItsFlag) {
  TlsFiles files = Files();
  files.key_path = Path("absent.pem");
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(files);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("--http-server-key"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("absent.pem"));
}

TEST_F(TlsCredentialsTest, AFileWithoutACertificateIsRefused) {
  WriteTestFile(Path("cert.pem"), "not a certificate\n");
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(Files());
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("--http-server-cert"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("no PEM certificate"));
}

TEST_F(TlsCredentialsTest, ATruncatedCertificateIsRefused) {
  WriteTestFile(Path("cert.pem"), pki_.server_cert.substr(0, pki_.server_cert.size() / 2));
  EXPECT_FALSE(LoadTlsCredentials(Files()).ok());
}

TEST_F(TlsCredentialsTest, AKeyOfAnotherCertificateIsRefused) {
  WriteTestFile(Path("key.pem"), pki_.client_key);
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(Files());
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("does not match"));
}

TEST_F(TlsCredentialsTest, ACertificateInTheKeyFileIsRefused) {
  WriteTestFile(Path("key.pem"), pki_.server_cert);
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(Files());
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("--http-server-key"));
}

TEST_F(TlsCredentialsTest, ABadRootFileNamesItsFlag) {
  WriteTestFile(Path("ca.pem"), "garbage");
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(Files());
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("--http-root-cert"));
}

TEST_F(TlsCredentialsTest, AnExpiredCertificateLoadsButSaysSo) {
  const TestPki expired = MakeTestPki("localhost", -1);
  WriteTestFile(Path("cert.pem"), expired.server_cert);
  WriteTestFile(Path("key.pem"), expired.server_key);
  absl::StatusOr<TlsCredentials> loaded = LoadTlsCredentials(Files());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->expired);
}

TEST_F(TlsCredentialsTest, IdentityChangesWhenAFileIsReplaced) {
  const FileIdentity before = IdentityOf(Path("cert.pem"));
  WriteTestFile(Path("cert.pem"), pki_.server_cert);
  EXPECT_NE(IdentityOf(Path("cert.pem")), before);
  EXPECT_EQ(IdentityOf(Path("absent.pem")), FileIdentity());
}

}  // namespace
}  // namespace brigade::frontend::tls
