#include "frontend/auth/access_policy.h"

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::frontend::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kInferToken[] = "infer-token-0123456789";
constexpr char kAdminToken[] = "admin-token-0123456789";
constexpr char kMetricsToken[] = "metrics-token-012345678";

TokenSet Tokens() {
  absl::StatusOr<TokenSet> set =
      TokenSet::Parse(std::string("infer ") + kInferToken + " app\nadmin " + kAdminToken +
                      " ops\nmetrics " + kMetricsToken + " prometheus\n");
  EXPECT_TRUE(set.ok()) << set.status();
  return *std::move(set);
}

// Headers by lower-case name, as a request carries them.
struct Request {
  Operation operation = Operation::kModelInfer;
  bool http = true;
  bool post = false;
  bool has_body = false;
  std::map<std::string, std::string> headers;
  // A verified client certificate's names.
  std::vector<std::string> peer_names;

  Decision Run(const PolicyOptions& policy, const TokenSet* tokens) const {
    auto names = [this] { return std::span<const std::string>(peer_names); };
    auto lookup = [this](std::string_view name) -> std::optional<std::string_view> {
      std::string lowered(name);
      for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const auto it = headers.find(lowered);
      if (it == headers.end()) return std::nullopt;
      return std::string_view(it->second);
    };
    return Decide(policy, tokens,
                  {.operation = operation,
                   .http = http,
                   .header = lookup,
                   .post = post,
                   .has_body = has_body,
                   .peer_names = names});
  }
};

Request WithToken(Operation operation, const char* token) {
  Request request;
  request.operation = operation;
  if (token != nullptr) request.headers["authorization"] = std::string("Bearer ") + token;
  return request;
}

struct Row {
  Operation operation;
  const char* token;  // null: no Authorization header
  Refusal expected;
};

class ScopeTableTest : public ::testing::TestWithParam<Row> {};

TEST_P(ScopeTableTest, DecidesByTheScopeTheOperationNeeds) {
  const TokenSet tokens = Tokens();
  const Row& row = GetParam();
  for (bool http : {true, false}) {
    Request request = WithToken(row.operation, row.token);
    request.http = http;
    const Decision decision = request.Run(PolicyOptions{}, &tokens);
    EXPECT_EQ(decision.refusal, row.expected)
        << OperationName(row.operation) << " with " << (row.token ? row.token : "no token")
        << " over " << (http ? "HTTP" : "gRPC") << ": " << decision.message;
    if (row.token != nullptr) {
      EXPECT_THAT(decision.message, Not(HasSubstr(row.token)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table, ScopeTableTest,
                         ::testing::Values(
                             // Health stays open for probes (default), with or without a token.
                             Row{Operation::kServerLive, nullptr, Refusal::kNone},
                             Row{Operation::kServerReady, nullptr, Refusal::kNone},
                             Row{Operation::kServerReady, "not-a-token-0123456789", Refusal::kNone},
                             // infer scope.
                             Row{Operation::kModelInfer, nullptr, Refusal::kMissingToken},
                             Row{Operation::kModelInfer, "not-a-token-0123456789",
                                 Refusal::kInvalidToken},
                             Row{Operation::kModelInfer, kInferToken, Refusal::kNone},
                             Row{Operation::kModelInfer, kAdminToken, Refusal::kScope},
                             Row{Operation::kModelInfer, kMetricsToken, Refusal::kScope},
                             Row{Operation::kModelMetadata, kInferToken, Refusal::kNone},
                             Row{Operation::kModelReady, kInferToken, Refusal::kNone},
                             Row{Operation::kModelReady, nullptr, Refusal::kMissingToken},
                             Row{Operation::kServerMetadata, kInferToken, Refusal::kNone},
                             Row{Operation::kModelConfig, kInferToken, Refusal::kNone},
                             Row{Operation::kModelStatistics, kInferToken, Refusal::kNone},
                             // admin scope.
                             Row{Operation::kRepositoryLoad, kInferToken, Refusal::kScope},
                             Row{Operation::kRepositoryLoad, kAdminToken, Refusal::kNone},
                             Row{Operation::kRepositoryUnload, nullptr, Refusal::kMissingToken},
                             Row{Operation::kRepositoryUnload, kAdminToken, Refusal::kNone},
                             Row{Operation::kRepositoryIndex, kInferToken, Refusal::kScope},
                             Row{Operation::kRepositoryIndex, kAdminToken, Refusal::kNone},
                             Row{Operation::kCacheInvalidate, kInferToken, Refusal::kScope},
                             Row{Operation::kCacheInvalidate, kAdminToken, Refusal::kNone},
                             Row{Operation::kLogSettings, kInferToken, Refusal::kScope},
                             Row{Operation::kLogSettings, kAdminToken, Refusal::kNone},
                             Row{Operation::kTraceSettings, kInferToken, Refusal::kScope},
                             Row{Operation::kTraceSettings, kAdminToken, Refusal::kNone},
                             Row{Operation::kSharedMemoryRegister, kInferToken, Refusal::kScope},
                             Row{Operation::kSharedMemoryRegister, kAdminToken, Refusal::kNone},
                             Row{Operation::kSharedMemoryStatus, kInferToken, Refusal::kNone},
                             // metrics scope.
                             Row{Operation::kMetrics, kInferToken, Refusal::kScope},
                             Row{Operation::kMetrics, kMetricsToken, Refusal::kNone},
                             Row{Operation::kDashboard, kMetricsToken, Refusal::kNone},
                             Row{Operation::kDashboard, nullptr, Refusal::kMissingToken}));

TEST(AccessPolicyTest, WithoutATokenFileEveryScopeIsOpen) {
  for (Operation operation : {Operation::kModelInfer, Operation::kRepositoryLoad,
                              Operation::kMetrics, Operation::kModelStatistics}) {
    EXPECT_TRUE(WithToken(operation, nullptr).Run(PolicyOptions{}, nullptr).ok())
        << OperationName(operation);
  }
}

TEST(AccessPolicyTest, ClosedHealthNeedsATokenToo) {
  const TokenSet tokens = Tokens();
  PolicyOptions policy;
  policy.health_open = false;
  EXPECT_EQ(WithToken(Operation::kServerLive, nullptr).Run(policy, &tokens).refusal,
            Refusal::kMissingToken);
  EXPECT_TRUE(WithToken(Operation::kServerLive, kInferToken).Run(policy, &tokens).ok());
}

TEST(AccessPolicyTest, StatisticsTakeTheConfiguredScope) {
  const TokenSet tokens = Tokens();
  PolicyOptions policy;
  policy.statistics_scope = Scope::kAdmin;
  EXPECT_EQ(WithToken(Operation::kModelStatistics, kInferToken).Run(policy, &tokens).refusal,
            Refusal::kScope);
  EXPECT_TRUE(WithToken(Operation::kModelStatistics, kAdminToken).Run(policy, &tokens).ok());
}

TEST(AccessPolicyTest, TheBearerSchemeIsCaseInsensitiveAndOtherSchemesAreMissing) {
  const TokenSet tokens = Tokens();
  Request request = WithToken(Operation::kModelInfer, nullptr);
  request.headers["authorization"] = std::string("bearer  ") + kInferToken;
  EXPECT_TRUE(request.Run(PolicyOptions{}, &tokens).ok());
  request.headers["authorization"] = std::string("Basic ") + kInferToken;
  EXPECT_EQ(request.Run(PolicyOptions{}, &tokens).refusal, Refusal::kMissingToken);
  request.headers["authorization"] = "Bearer";
  EXPECT_EQ(request.Run(PolicyOptions{}, &tokens).refusal, Refusal::kMissingToken);
}

TEST(AccessPolicyTest, TheScopeRefusalNamesTheTokenAndTheScopeWanted) {
  const TokenSet tokens = Tokens();
  const Decision decision =
      WithToken(Operation::kRepositoryLoad, kInferToken).Run(PolicyOptions{}, &tokens);
  EXPECT_EQ(decision.refusal, Refusal::kScope);
  EXPECT_EQ(decision.principal, "app");
  EXPECT_EQ(decision.scope, Scope::kAdmin);
  EXPECT_THAT(decision.message, HasSubstr("token 'app' lacks scope 'admin'"));
}

TEST(RestrictionTest, ParsesTritonsSyntax) {
  absl::StatusOr<Restriction> parsed =
      ParseRestriction("health,model-repository:admin-key=s3cret", "--http-restricted-api");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->header, "admin-key");
  EXPECT_EQ(parsed->value, "s3cret");
  EXPECT_EQ(parsed->groups, (1u << static_cast<int>(ApiGroup::kHealth)) |
                                (1u << static_cast<int>(ApiGroup::kModelRepository)));
}

TEST(RestrictionTest, RefusesMalformedFlagsNamingTheFlag) {
  for (const char* bad : {"health", "health:key", "nothing:key=value", "health:=value",
                          "health:key=", "health:bad key=v"}) {
    absl::StatusOr<Restriction> parsed = ParseRestriction(bad, "--grpc-restricted-protocol");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("--grpc-restricted-protocol")) << bad;
  }
}

TEST(RestrictionTest, AGroupMayBeRestrictedOnlyOnce) {
  std::vector<Restriction> restrictions;
  ASSERT_TRUE(AddRestriction(*ParseRestriction("inference,health:a=1", "f"), &restrictions).ok());
  ASSERT_TRUE(AddRestriction(*ParseRestriction("statistics:b=2", "f"), &restrictions).ok());
  const absl::Status twice = AddRestriction(*ParseRestriction("health:c=3", "f"), &restrictions);
  EXPECT_THAT(twice.message(), HasSubstr("'health' is restricted twice"));
}

TEST(RestrictionTest, ARestrictedGroupNeedsTheHeaderWithItsValue) {
  PolicyOptions policy;
  ASSERT_TRUE(AddRestriction(*ParseRestriction("model-repository:admin-key=s3cret", "f"),
                             &policy.http_restrictions)
                  .ok());
  Request unload = WithToken(Operation::kRepositoryUnload, nullptr);
  Decision decision = unload.Run(policy, nullptr);
  EXPECT_EQ(decision.refusal, Refusal::kRestricted);
  EXPECT_THAT(decision.message, HasSubstr("send header 'admin-key'"));
  unload.headers["admin-key"] = "wrong";
  EXPECT_EQ(unload.Run(policy, nullptr).refusal, Refusal::kRestricted);
  unload.headers["admin-key"] = "s3cret";
  EXPECT_TRUE(unload.Run(policy, nullptr).ok());
  // Other groups are not restricted.
  EXPECT_TRUE(WithToken(Operation::kModelInfer, nullptr).Run(policy, nullptr).ok());
}

TEST(RestrictionTest, GrpcReadsTheKeyUnderTritonsPrefixInLowerCase) {
  PolicyOptions policy;
  ASSERT_TRUE(
      AddRestriction(*ParseRestriction("inference:Infer-Key=v1", "f"), &policy.grpc_restrictions)
          .ok());
  Request infer = WithToken(Operation::kModelInfer, nullptr);
  infer.http = false;
  infer.headers["infer-key"] = "v1";
  EXPECT_EQ(infer.Run(policy, nullptr).refusal, Refusal::kRestricted);
  infer.headers["triton-grpc-protocol-infer-key"] = "v1";
  EXPECT_TRUE(infer.Run(policy, nullptr).ok());
  // A gRPC restriction does not restrict HTTP.
  EXPECT_TRUE(WithToken(Operation::kModelInfer, nullptr).Run(policy, nullptr).ok());
  EXPECT_EQ(GrpcCodeFor(Refusal::kRestricted), absl::StatusCode::kUnavailable);
  EXPECT_EQ(HttpStatusFor(Refusal::kRestricted), 403);
}

TEST(RestrictionTest, ModelReadinessIsTritonsHealthGroup) {
  EXPECT_EQ(GroupOf(Operation::kModelReady), ApiGroup::kHealth);
  EXPECT_EQ(GroupOf(Operation::kCacheInvalidate), ApiGroup::kModelRepository);
  EXPECT_EQ(GroupOf(Operation::kMetrics), std::nullopt);
}

TEST(HostTest, AllowedHostsMatchWithOrWithoutAPort) {
  PolicyOptions policy;
  policy.allowed_hosts = {"brigade.internal", "127.0.0.1:8000", "[::1]"};
  auto run = [&policy](const char* host) {
    Request request = WithToken(Operation::kModelInfer, nullptr);
    if (host != nullptr) request.headers["host"] = host;
    return request.Run(policy, nullptr).refusal;
  };
  EXPECT_EQ(run("brigade.internal"), Refusal::kNone);
  EXPECT_EQ(run("Brigade.Internal:8000"), Refusal::kNone);
  EXPECT_EQ(run("127.0.0.1:8000"), Refusal::kNone);
  EXPECT_EQ(run("[::1]:8000"), Refusal::kNone);
  EXPECT_EQ(run("127.0.0.1:9000"), Refusal::kHost);
  EXPECT_EQ(run("attacker.example"), Refusal::kHost);
  EXPECT_EQ(run(nullptr), Refusal::kHost);
  EXPECT_EQ(HttpStatusFor(Refusal::kHost), 403);
}

TEST(CrossSiteTest, AnAdminPostWithABodyMustBeJson) {
  Request unload = WithToken(Operation::kRepositoryUnload, nullptr);
  unload.post = true;
  unload.has_body = true;
  unload.headers["content-type"] = "text/plain";
  const Decision decision = unload.Run(PolicyOptions{}, nullptr);
  EXPECT_EQ(decision.refusal, Refusal::kContentType);
  EXPECT_EQ(HttpStatusFor(decision.refusal), 415);
  unload.headers["content-type"] = "Application/JSON; charset=utf-8";
  EXPECT_TRUE(unload.Run(PolicyOptions{}, nullptr).ok());
  unload.headers["content-type"] = "application/x-www-form-urlencoded";
  EXPECT_EQ(unload.Run(PolicyOptions{}, nullptr).refusal, Refusal::kContentType);
  // No Content-Type: what Triton's clients send (the Origin check stops a browser).
  unload.headers.erase("content-type");
  EXPECT_TRUE(unload.Run(PolicyOptions{}, nullptr).ok());
  // The read-only index is not checked.
  Request index = WithToken(Operation::kRepositoryIndex, nullptr);
  index.post = true;
  index.has_body = true;
  index.headers["content-type"] = "text/plain";
  EXPECT_TRUE(index.Run(PolicyOptions{}, nullptr).ok());
}

TEST(CrossSiteTest, AnAdminPostFromAnotherOriginIsRefusedWithoutACredential) {
  const TokenSet tokens = Tokens();
  Request unload = WithToken(Operation::kRepositoryUnload, nullptr);
  unload.post = true;
  unload.headers["host"] = "127.0.0.1:8000";
  unload.headers["origin"] = "http://attacker.example";
  EXPECT_EQ(unload.Run(PolicyOptions{}, nullptr).refusal, Refusal::kOrigin);
  unload.headers["origin"] = "http://127.0.0.1:8000";
  EXPECT_TRUE(unload.Run(PolicyOptions{}, nullptr).ok());
  unload.headers["sec-fetch-site"] = "cross-site";
  EXPECT_EQ(unload.Run(PolicyOptions{}, nullptr).refusal, Refusal::kOrigin);
  // A bearer token cannot be sent cross-origin without a preflight: it vouches for the request.
  unload.headers["authorization"] = std::string("Bearer ") + kAdminToken;
  unload.has_body = true;
  unload.headers["content-type"] = "text/plain";
  EXPECT_TRUE(unload.Run(PolicyOptions{}, &tokens).ok());
}

TEST(CrossSiteTest, InferenceAndGrpcAreNotSubjectToTheCrossSiteCheck) {
  Request infer = WithToken(Operation::kModelInfer, nullptr);
  infer.post = true;
  infer.has_body = true;
  infer.headers["content-type"] = "application/octet-stream";
  infer.headers["origin"] = "http://elsewhere.example";
  EXPECT_TRUE(infer.Run(PolicyOptions{}, nullptr).ok());
  Request unload = WithToken(Operation::kRepositoryUnload, nullptr);
  unload.http = false;
  unload.post = true;
  unload.has_body = true;
  EXPECT_TRUE(unload.Run(PolicyOptions{}, nullptr).ok());
}

// ---- client certificates (mutual TLS) ----------------------------------------------------------

TokenSet TokensWithIdentities() {
  absl::StatusOr<TokenSet> set = TokenSet::Parse(std::string("infer ") + kInferToken +
                                                 " app\n"
                                                 "infer,admin cert:spiffe://brigade/ops ops\n"
                                                 "infer cert:client.example reader\n");
  EXPECT_TRUE(set.ok()) << set.status();
  return *std::move(set);
}

TEST(AccessPolicyTest, AVerifiedCertificateNamedInTheFileHasItsScopes) {
  const TokenSet tokens = TokensWithIdentities();
  Request request;
  request.operation = Operation::kRepositoryLoad;
  request.peer_names = {"unrelated.example", "spiffe://brigade/ops"};
  const Decision decision = request.Run({}, &tokens);
  EXPECT_TRUE(decision.ok()) << decision.message;
  EXPECT_EQ(decision.principal, "ops");
}

TEST(AccessPolicyTest, ACertificateWithoutTheScopeIsRefusedByName) {
  const TokenSet tokens = TokensWithIdentities();
  Request request;
  request.operation = Operation::kRepositoryUnload;
  request.peer_names = {"client.example"};
  const Decision decision = request.Run({}, &tokens);
  EXPECT_EQ(decision.refusal, Refusal::kScope);
  EXPECT_THAT(decision.message, HasSubstr("client certificate 'reader' lacks scope 'admin'"));
}

TEST(AccessPolicyTest, ACertificateTheFileDoesNotNameNeedsAToken) {
  const TokenSet tokens = TokensWithIdentities();
  Request request;
  request.peer_names = {"stranger.example"};
  EXPECT_EQ(request.Run({}, &tokens).refusal, Refusal::kMissingToken);
}

TEST(AccessPolicyTest, ATokenSentBesideACertificateIsWhatCounts) {
  const TokenSet tokens = TokensWithIdentities();
  Request request = WithToken(Operation::kRepositoryLoad, kInferToken);
  request.peer_names = {"spiffe://brigade/ops"};
  const Decision decision = request.Run({}, &tokens);
  EXPECT_EQ(decision.refusal, Refusal::kScope);
  EXPECT_THAT(decision.message, HasSubstr("token 'app'"));
}

// A browser presents its client certificate to any page's requests: a certificate alone does
// not let a cross-site POST through.
TEST(AccessPolicyTest, ACertificateIsNoDefenceAgainstACrossSitePost) {
  const TokenSet tokens = TokensWithIdentities();
  Request request;
  request.operation = Operation::kRepositoryUnload;
  request.post = true;
  request.has_body = true;
  request.peer_names = {"spiffe://brigade/ops"};
  request.headers["host"] = "server:8000";
  request.headers["origin"] = "https://evil.example";
  EXPECT_EQ(request.Run({}, &tokens).refusal, Refusal::kOrigin);
  request.headers.erase("origin");
  request.headers["content-type"] = "text/plain";
  EXPECT_EQ(request.Run({}, &tokens).refusal, Refusal::kContentType);
}

}  // namespace
}  // namespace brigade::frontend::auth
