#include "frontend/tls/tls_credential_store.h"

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "frontend/tls/test_pki.h"
#include "gtest/gtest.h"

namespace brigade::frontend::tls {
namespace {

class TlsCredentialStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/brigade-tls-store-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    first_ = MakeTestPki();
    second_ = MakeTestPki();
    Install(first_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Install(const TestPki& pki) {
    WriteTestFile(dir_ + "/cert.pem", pki.server_cert);
    WriteTestFile(dir_ + "/key.pem", pki.server_key);
  }
  TlsFiles Files() const { return TlsFiles{dir_ + "/cert.pem", dir_ + "/key.pem", "", "--grpc"}; }

  std::string dir_;
  TestPki first_, second_;
  int applied_ = 0;
  TlsCredentialStore::Apply apply_ = [this](const TlsCredentials&) {
    ++applied_;
    return absl::OkStatus();
  };
};

TEST_F(TlsCredentialStoreTest, UnchangedFilesAreNotReadAgain) {
  absl::StatusOr<std::unique_ptr<TlsCredentialStore>> store = TlsCredentialStore::Create(Files());
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<bool> changed = (*store)->ReloadIfChanged(apply_);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(applied_, 0);
}

TEST_F(TlsCredentialStoreTest, ARotatedPairIsAppliedAndKept) {
  auto store = *TlsCredentialStore::Create(Files());
  Install(second_);
  absl::StatusOr<bool> changed = store->ReloadIfChanged(apply_);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(applied_, 1);
  EXPECT_EQ(store->current().cert_chain_pem, second_.server_cert);
}

TEST_F(TlsCredentialStoreTest, ABadRotationKeepsTheCredentialsInForce) {
  auto store = *TlsCredentialStore::Create(Files());
  WriteTestFile(dir_ + "/cert.pem", "-----BEGIN CERTIFICATE-----\ngarbage\n");
  absl::StatusOr<bool> changed = store->ReloadIfChanged(apply_);
  EXPECT_FALSE(changed.ok());
  EXPECT_EQ(applied_, 0);
  EXPECT_EQ(store->current().cert_chain_pem, first_.server_cert);
  // Not read again until it changes again.
  changed = store->ReloadIfChanged(apply_);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

TEST_F(TlsCredentialStoreTest, AHalfDoneRotationIsPickedUpWhenTheKeyArrives) {
  auto store = *TlsCredentialStore::Create(Files());
  WriteTestFile(dir_ + "/cert.pem", second_.server_cert);  // the new key is not there yet
  EXPECT_FALSE(store->ReloadIfChanged(apply_).ok());
  WriteTestFile(dir_ + "/key.pem", second_.server_key);
  absl::StatusOr<bool> changed = store->ReloadIfChanged(apply_);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(store->current().private_key_pem, second_.server_key);
}

TEST_F(TlsCredentialStoreTest, CredentialsTheFrontEndRefusesAreNotKept) {
  auto store = *TlsCredentialStore::Create(Files());
  Install(second_);
  const absl::Status status = store->Reload(
      [](const TlsCredentials&) { return absl::InternalError("the front end said no"); });
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(store->current().cert_chain_pem, first_.server_cert);
}

TEST_F(TlsCredentialStoreTest, CreateRefusesBadFiles) {
  WriteTestFile(dir_ + "/key.pem", second_.server_key);
  EXPECT_FALSE(TlsCredentialStore::Create(Files()).ok());
}

}  // namespace
}  // namespace brigade::frontend::tls
