#include "frontend/auth/access_gate.h"

#include <string>

#include "core/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "telemetry/metrics_registry.h"

namespace brigade::frontend::auth {
namespace {

using ::testing::HasSubstr;

std::optional<std::string_view> NoHeaders(std::string_view) { return std::nullopt; }

TEST(AccessGateTest, CountsEachRefusalByProtocolAndReason) {
  telemetry::MetricsRegistry registry;
  FakeClock clock;
  AccessGate::Options options;
  ASSERT_TRUE(AddRestriction(*ParseRestriction("inference:key=value", "f"),
                             &options.policy.http_restrictions)
                  .ok());
  ASSERT_TRUE(AddRestriction(*ParseRestriction("inference:key=value", "f"),
                             &options.policy.grpc_restrictions)
                  .ok());
  options.registry = &registry;
  options.clock = &clock;
  absl::StatusOr<std::unique_ptr<AccessGate>> gate = AccessGate::Create(options);
  ASSERT_TRUE(gate.ok()) << gate.status();

  EXPECT_FALSE((*gate)
                   ->Check({.operation = Operation::kModelInfer, .http = true, .header = NoHeaders})
                   .ok());
  EXPECT_FALSE(
      (*gate)
          ->Check({.operation = Operation::kModelInfer, .http = false, .header = NoHeaders})
          .ok());
  EXPECT_FALSE(
      (*gate)
          ->Check({.operation = Operation::kModelInfer, .http = false, .header = NoHeaders})
          .ok());
  EXPECT_TRUE((*gate)
                  ->Check({.operation = Operation::kModelReady, .http = true, .header = NoHeaders})
                  .ok());
  EXPECT_EQ((*gate)->refusals(true, Refusal::kRestricted), 1u);
  EXPECT_EQ((*gate)->refusals(false, Refusal::kRestricted), 2u);
  EXPECT_EQ((*gate)->refusals(true, Refusal::kMissingToken), 0u);

  std::string text;
  registry.AppendText(&text);
  EXPECT_THAT(text,
              HasSubstr("brigade_auth_refusals_total{protocol=\"grpc\",reason=\"restricted\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("brigade_auth_refusals_total{protocol=\"http\",reason=\"restricted\"} 1"));
}

TEST(AccessGateTest, WithoutATokenStoreNoCredentialIsConfigured) {
  absl::StatusOr<std::unique_ptr<AccessGate>> gate = AccessGate::Create({});
  ASSERT_TRUE(gate.ok());
  EXPECT_FALSE((*gate)->credentials_configured());
  EXPECT_TRUE(
      (*gate)
          ->Check({.operation = Operation::kRepositoryLoad, .http = true, .header = NoHeaders})
          .ok());
}

}  // namespace
}  // namespace brigade::frontend::auth
