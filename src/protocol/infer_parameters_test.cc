#include "protocol/infer_parameters.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol {
namespace {

using ::testing::HasSubstr;

Parameters One(std::string key, ParameterValue value) {
  Parameters parameters;
  parameters.Set(std::move(key), std::move(value));
  return parameters;
}

// Values that turn a feature on, of every type a client may send.
std::vector<ParameterValue> OnValues() {
  return {ParameterValue(true), ParameterValue(int64_t{7}), ParameterValue(uint64_t{7}),
          ParameterValue(0.5), ParameterValue(std::string("on"))};
}

std::vector<ParameterValue> OffValues() {
  return {ParameterValue(false), ParameterValue(int64_t{0}), ParameterValue(uint64_t{0}),
          ParameterValue(0.0), ParameterValue(std::string())};
}

// The whole table, rule by rule: refused keys are refused with any value that turns them on,
// naming the map's owner and the key; the others pass the check with any value (their codec
// checks the type).
TEST(InferParametersTest, EveryRuleOfTheTableIsEnforced) {
  ASSERT_FALSE(ParameterRules().empty());
  for (const ParameterRule& rule : ParameterRules()) {
    SCOPED_TRACE(std::string(rule.key));
    EXPECT_FALSE(rule.note.empty());
    for (const ParameterValue& value : OnValues()) {
      const absl::Status status =
          CheckParameters(rule.scope, One(std::string(rule.key), value), "input 'x'");
      if (rule.support == ParameterSupport::kRefused) {
        EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
        EXPECT_THAT(std::string(status.message()),
                    HasSubstr(StrCat("input 'x' parameter '", rule.key, "'")));
        EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(rule.note)));
      } else {
        EXPECT_TRUE(status.ok()) << status;
      }
    }
    for (const ParameterValue& value : OffValues()) {
      const absl::Status status =
          CheckParameters(rule.scope, One(std::string(rule.key), value), "request");
      EXPECT_EQ(status.ok(), rule.support != ParameterSupport::kRefused || rule.off_accepted)
          << status;
    }
  }
}

TEST(InferParametersTest, EachKeyHasOneRulePerScope) {
  std::set<std::pair<ParameterScope, std::string_view>> seen;
  for (const ParameterRule& rule : ParameterRules()) {
    EXPECT_TRUE(seen.emplace(rule.scope, rule.key).second) << rule.key;
    EXPECT_EQ(FindParameterRule(rule.scope, rule.key), &rule);
  }
  EXPECT_EQ(FindParameterRule(ParameterScope::kInput, "sequence_id"), nullptr);
}

// Triton's reserved request keys (its parameters extension) all have a rule, so none of them can
// pass as a custom parameter.
TEST(InferParametersTest, TritonsReservedRequestKeysAreAllListed) {
  for (std::string_view key :
       {"sequence_id", "sequence_start", "sequence_end", "priority", "timeout", "headers"}) {
    EXPECT_NE(FindParameterRule(ParameterScope::kRequest, key), nullptr) << key;
  }
  for (ParameterScope scope : {ParameterScope::kInput, ParameterScope::kOutput}) {
    for (std::string_view key :
         {"shared_memory_region", "shared_memory_offset", "shared_memory_byte_size"}) {
      const ParameterRule* rule = FindParameterRule(scope, key);
      ASSERT_NE(rule, nullptr) << key;
      EXPECT_EQ(rule->support, ParameterSupport::kImplemented);
    }
  }
}

TEST(InferParametersTest, UnknownTritonKeysAreRefusedInEveryScope) {
  for (ParameterScope scope :
       {ParameterScope::kRequest, ParameterScope::kInput, ParameterScope::kOutput}) {
    const absl::Status status =
        CheckParameters(scope, One("triton_future_feature", true), "output 'y'");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("output 'y' parameter 'triton_future_feature'"));
  }
}

TEST(InferParametersTest, CustomParametersPass) {
  Parameters parameters;
  parameters.Set("user_id", int64_t{42});
  parameters.Set("tritonish", true);  // the prefix is "triton_", with the underscore
  parameters.Set("sequence_start", false);
  EXPECT_TRUE(CheckParameters(ParameterScope::kRequest, parameters, "request").ok());
}

TEST(InferParametersTest, TheFirstRefusedKeyIsNamed) {
  Parameters parameters;
  parameters.Set("user_id", int64_t{42});
  parameters.Set("sequence_id", uint64_t{9});
  const absl::Status status = CheckParameters(ParameterScope::kRequest, parameters, "request");
  EXPECT_EQ(status.message(),
            "request parameter 'sequence_id': sequence batching (stateful models) is not "
            "supported on this server");
}

}  // namespace
}  // namespace brigade::protocol
