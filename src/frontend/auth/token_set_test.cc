#include "frontend/auth/token_set.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::frontend::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Hex(const Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

TEST(Sha256Test, MatchesTheStandardTestVector) {
  EXPECT_EQ(Hex(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokenSetTest, ParsesPlainAndHashedTokensWithTheirScopes) {
  const std::string text = "# comment\n\ninfer,metrics  client-token-0123456789  app\n" +
                           std::string("admin sha256:") + Hex(Sha256("operator-secret-abcdef")) +
                           " ops\n";
  absl::StatusOr<TokenSet> set = TokenSet::Parse(text);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->size(), 2u);
  const TokenEntry* app = set->Find("client-token-0123456789");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->name, "app");
  EXPECT_TRUE(HasScope(app->scopes, Scope::kInfer));
  EXPECT_TRUE(HasScope(app->scopes, Scope::kMetrics));
  EXPECT_FALSE(HasScope(app->scopes, Scope::kAdmin));
  const TokenEntry* ops = set->Find("operator-secret-abcdef");
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops->name, "ops");
  EXPECT_EQ(ops->scopes, static_cast<ScopeSet>(Scope::kAdmin));
}

TEST(TokenSetTest, UnknownTokensAndNearMissesAreNotFound) {
  absl::StatusOr<TokenSet> set = TokenSet::Parse("infer client-token-0123456789 app\n");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->Find("client-token-012345678"), nullptr);
  EXPECT_EQ(set->Find("client-token-0123456780"), nullptr);
  EXPECT_EQ(set->Find(""), nullptr);
  EXPECT_EQ(set->Find(std::string(kMaxTokenChars + 1, 'a')), nullptr);
}

TEST(TokenSetTest, KeepsNoTokenInMemoryOnlyItsDigest) {
  absl::StatusOr<TokenSet> set = TokenSet::Parse("infer client-token-0123456789 app\n");
  ASSERT_TRUE(set.ok());
  const TokenEntry& entry = set->entries()[0];
  EXPECT_EQ(entry.digest, Sha256("client-token-0123456789"));
  EXPECT_THAT(entry.name, Not(HasSubstr("client-token")));
}

TEST(TokenSetTest, ComparesWithEveryEntryEvenAfterAMatch) {
  absl::StatusOr<TokenSet> set = TokenSet::Parse(
      "infer first-token-0123456789 a\ninfer second-token-012345678 b\n"
      "infer third-token-0123456789 c\n");
  ASSERT_TRUE(set.ok());
  int compared = 0;
  auto counting = [&compared](const Digest& a, const Digest& b) {
    ++compared;
    return ConstantTimeEqual(a, b);
  };
  const TokenEntry* found = set->Find("first-token-0123456789", counting);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->name, "a");
  EXPECT_EQ(compared, 3);
}

TEST(TokenSetTest, ConstantTimeEqualTellsEqualFromDifferentDigests) {
  const Digest a = Sha256("one");
  Digest b = a;
  EXPECT_TRUE(ConstantTimeEqual(a, b));
  b[31] ^= 1;
  EXPECT_FALSE(ConstantTimeEqual(a, b));
}

struct BadFile {
  const char* text;
  const char* error;
};

class TokenSetErrorTest : public ::testing::TestWithParam<BadFile> {};

TEST_P(TokenSetErrorTest, NamesTheLineAndFieldButNeverTheToken) {
  absl::StatusOr<TokenSet> set = TokenSet::Parse(GetParam().text);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr(GetParam().error));
  EXPECT_THAT(set.status().message(), Not(HasSubstr("secret")));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, TokenSetErrorTest,
    ::testing::Values(BadFile{"infer secret-token-0123456789\n", "line 1: expected"},
                      BadFile{"\ninfer secret-token-0123456789 a extra\n", "line 2: expected"},
                      BadFile{"write secret-token-0123456789 a\n", "unknown scope 'write'"},
                      BadFile{"infer,,admin secret-token-0123456789 a\n", "unknown scope ''"},
                      BadFile{"infer secret a\n", "16 to 4096 characters"},
                      BadFile{"infer sha256:abcd a\n", "exactly 64 hex digits"},
                      BadFile{"infer secret-token-0123456789 a/b\n", "a name is"},
                      BadFile{"infer secret-token-0123456789 a\nadmin secret-token-9876543210 a\n",
                              "line 2: name 'a' appears twice"},
                      BadFile{"infer secret-token-0123456789 a\nadmin secret-token-0123456789 b\n",
                              "is the same as the token of 'a'"}));

TEST(TokenSetTest, RefusesAFileOverTheSizeLimit) {
  const std::string big(kMaxTokenFileBytes + 1, '#');
  absl::StatusOr<TokenSet> set = TokenSet::Parse(big);
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("the limit is"));
}

TEST(TokenSetTest, CertificateLinesMapIdentitiesToScopesInFileOrder) {
  absl::StatusOr<TokenSet> set = TokenSet::Parse(
      "admin cert:spiffe://brigade/ops ops\n"
      "infer,metrics cert:client.example reader\n");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->size(), 2u);
  EXPECT_TRUE(set->entries().empty());
  const std::vector<std::string> both = {"client.example", "spiffe://brigade/ops"};
  const IdentityEntry* found = set->FindIdentity(both);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->name, "ops");  // the first line naming one of them, not the first name
  EXPECT_EQ(found->scopes, static_cast<ScopeSet>(Scope::kAdmin));
  const std::vector<std::string> reader = {"client.example"};
  ASSERT_NE(set->FindIdentity(reader), nullptr);
  EXPECT_EQ(set->FindIdentity(reader)->name, "reader");
  const std::vector<std::string> stranger = {"Client.example", "client.example.evil"};
  EXPECT_EQ(set->FindIdentity(stranger), nullptr);
  EXPECT_EQ(set->Find("cert:client.example"), nullptr);  // not a token
}

TEST(TokenSetTest, RefusesEmptyTooLongAndRepeatedIdentities) {
  EXPECT_THAT(TokenSet::Parse("infer cert: x\n").status().message(),
              HasSubstr("line 1: a cert: identity must have 1 to 256"));
  EXPECT_THAT(TokenSet::Parse("infer cert:" + std::string(257, 'a') + " x\n").status().message(),
              HasSubstr("line 1: a cert: identity"));
  EXPECT_THAT(
      TokenSet::Parse("infer cert:a.example x\nadmin cert:a.example y\n").status().message(),
      HasSubstr("line 2: identity 'a.example' of 'y' is already the identity of 'x'"));
}

}  // namespace
}  // namespace brigade::frontend::auth
