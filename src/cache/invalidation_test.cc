#include "cache/invalidation.h"

#include <string>

#include "cache/latency_histogram.h"
#include "gtest/gtest.h"

namespace brigade::cache {
namespace {

TEST(InvalidationTest, ScopesCoverWhatTheyName) {
  const InvalidationScope all = InvalidationScope::All();
  const InvalidationScope model = InvalidationScope::Model("a");
  const InvalidationScope version = InvalidationScope::ModelVersion("a", 2);
  EXPECT_TRUE(all.Covers("anything", 9));
  EXPECT_TRUE(model.Covers("a", 1));
  EXPECT_TRUE(model.Covers("a", 2));
  EXPECT_FALSE(model.Covers("ab", 1));
  EXPECT_TRUE(version.Covers("a", 2));
  EXPECT_FALSE(version.Covers("a", 1));
  EXPECT_FALSE(version.Covers("b", 2));
  EXPECT_EQ(version.ToString(), "model 'a' version 2");
}

TEST(InvalidationTest, MessagesRoundTrip) {
  for (const InvalidationScope& scope :
       {InvalidationScope::All(), InvalidationScope::Model("resnet"),
        InvalidationScope::ModelVersion("name with spaces:and*glob", -1)}) {
    const InvalidationMessage sent{scope, 0xfeedface12345678};
    absl::StatusOr<InvalidationMessage> received = DecodeInvalidation(EncodeInvalidation(sent));
    ASSERT_TRUE(received.ok()) << received.status();
    EXPECT_EQ(received->scope, scope);
    EXPECT_EQ(received->origin, sent.origin);
  }
}

TEST(InvalidationTest, MalformedMessagesAreRejected) {
  const std::string good = EncodeInvalidation({InvalidationScope::Model("m"), 1});
  for (size_t length = 0; length < good.size(); ++length) {
    EXPECT_FALSE(DecodeInvalidation(good.substr(0, length)).ok()) << length;
  }
  EXPECT_FALSE(DecodeInvalidation(good + "x").ok());
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_FALSE(DecodeInvalidation(bad_magic).ok());
  std::string bad_kind = good;
  bad_kind[12] = 7;  // after magic (4) and origin (8)
  EXPECT_FALSE(DecodeInvalidation(bad_kind).ok());
  // A model scope without a model name would read as "all" to a careless decoder.
  InvalidationMessage nameless{InvalidationScope::Model(""), 1};
  EXPECT_FALSE(DecodeInvalidation(EncodeInvalidation(nameless)).ok());
}

TEST(LatencyHistogramTest, SamplesLandInTheirBucketsAndQuantilesFollow) {
  LatencyHistogram histogram;
  for (int i = 0; i < 90; ++i) histogram.Record(3'000);    // 5 µs bucket
  for (int i = 0; i < 10; ++i) histogram.Record(150'000);  // 200 µs bucket
  histogram.Record(-5);                                    // clamps to 0: 1 µs bucket
  const LatencySnapshot snapshot = histogram.Snapshot();
  EXPECT_EQ(snapshot.count, 101u);
  EXPECT_EQ(snapshot.sum_ns, 90u * 3'000 + 10u * 150'000);
  EXPECT_EQ(snapshot.counts.size(), snapshot.upper_bounds_ns.size() + 1);
  EXPECT_EQ(snapshot.QuantileUpperBoundNs(0.5), 5'000);
  EXPECT_EQ(snapshot.QuantileUpperBoundNs(0.99), 200'000);
  histogram.Record(int64_t{10} * 1'000'000'000);  // +Inf bucket
  EXPECT_EQ(histogram.Snapshot().counts.back(), 1u);
  EXPECT_EQ(LatencySnapshot{}.QuantileUpperBoundNs(0.5), 0);
}

}  // namespace
}  // namespace brigade::cache
