#include "core/parameters.h"

#include "gtest/gtest.h"

namespace brigade {
namespace {

TEST(ParametersTest, SetReplacesAndKeepsOrder) {
  Parameters params;
  params.Set("b", int64_t{1});
  params.Set("a", true);
  params.Set("b", std::string("x"));
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params.entries()[0].first, "b");
  EXPECT_EQ(params.GetString("b"), "x");
}

TEST(ParametersTest, TypedGettersDoNotCoerceStrings) {
  Parameters params;
  params.Set("n", std::string("5"));
  params.Set("u", uint64_t{7});
  params.Set("big", uint64_t{1} << 63);
  params.Set("f", 0.5);
  EXPECT_FALSE(params.GetInt("n").has_value());
  EXPECT_EQ(params.GetInt("u"), 7);
  EXPECT_FALSE(params.GetInt("big").has_value());
  EXPECT_EQ(params.GetDouble("u"), 7.0);
  EXPECT_EQ(params.GetDouble("f"), 0.5);
  EXPECT_FALSE(params.GetBool("f").has_value());
  EXPECT_FALSE(params.GetInt("missing").has_value());
}

TEST(ParametersTest, EraseRemovesOnlyTheKey) {
  Parameters params;
  params.Set("a", true);
  params.Set("b", false);
  EXPECT_TRUE(params.Erase("a"));
  EXPECT_FALSE(params.Erase("a"));
  EXPECT_TRUE(params.Contains("b"));
}

}  // namespace
}  // namespace brigade
