#include "cache/cached_value.h"

#include <cstring>
#include <string>
#include <vector>

#include "cache/byte_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "xxhash.h"

namespace brigade::cache {
namespace {

using ::testing::HasSubstr;

CacheKey MakeKey() {
  InferRequest request;
  request.model_name = "m";
  request.inputs.push_back({"x", *Tensor::FromValues<float>({2}, std::vector<float>{1, 2}), {}});
  return KeyBuilder(KeyBuilder::Options{}).Build(request, 3, "");
}

InferResponse MakeResponse() {
  InferResponse response;
  response.model_name = "m";
  response.model_version = "3";
  response.id = "not stored";
  response.parameters.Set("sequence_end", true);
  response.parameters.Set("note", std::string("hello"));
  Parameters output_parameters;
  output_parameters.Set("scale", 0.25);
  std::vector<float> probs = {0.1f, 0.2f, 0.7f, 0.3f, 0.3f, 0.4f};
  response.outputs.push_back(
      {"probs", *Tensor::FromValues<float>({2, 3}, probs), output_parameters});
  std::vector<std::string> labels = {"cat", ""};
  response.outputs.push_back({"labels", *Tensor::FromStrings({2}, labels), {}});
  response.outputs.push_back(
      {"count", *Tensor::FromValues<int64_t>({}, std::vector<int64_t>{-5}), {}});
  return response;
}

std::shared_ptr<const std::string> Blob(std::string bytes) {
  return std::make_shared<const std::string>(std::move(bytes));
}

TEST(CachedValueTest, RoundTripKeepsEverythingTheAnswerNeeds) {
  const CacheKey key = MakeKey();
  const InferResponse response = MakeResponse();
  absl::StatusOr<std::shared_ptr<const CachedEntry>> decoded =
      DecodeCachedValue(Blob(EncodeCachedValue(key, response, 123456)));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const CachedEntry& entry = **decoded;
  EXPECT_TRUE(key.Matches(entry.id, entry.check, entry.descriptor));
  EXPECT_EQ(entry.expires_unix_ms, 123456);
  EXPECT_EQ(entry.model_version, "3");
  EXPECT_EQ(entry.parameters, response.parameters);
  ASSERT_EQ(entry.outputs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const InferOutput& got = entry.outputs[i];
    const InferOutput& want = response.outputs[i];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.tensor.dtype(), want.tensor.dtype());
    EXPECT_EQ(got.tensor.shape(), want.tensor.shape());
    EXPECT_EQ(got.parameters, want.parameters);
    ASSERT_EQ(got.tensor.byte_size(), want.tensor.byte_size());
    EXPECT_EQ(std::memcmp(got.tensor.data(), want.tensor.data(), want.tensor.byte_size()), 0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(got.tensor.data()) % 16, 0u) << got.name;
  }
  EXPECT_EQ(*entry.outputs[1].tensor.StringValues(), (std::vector<std::string_view>{"cat", ""}));
  EXPECT_GE(entry.charge_bytes(), entry.blob->size());
}

TEST(CachedValueTest, EncodingCopiesSoLaterWritesToTheResponseDoNotLeakIn) {
  const CacheKey key = MakeKey();
  InferResponse response = MakeResponse();
  std::string value = EncodeCachedValue(key, response, 0);
  response.outputs[0].tensor.mutable_values<float>()[0] = 42.0f;  // the backend reuses its buffer
  auto entry = DecodeCachedValue(Blob(std::move(value)));
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ((*entry)->outputs[0].tensor.values<float>()[0], 0.1f);
}

TEST(CachedValueTest, EmptyResponseRoundTrips) {
  const CacheKey key = MakeKey();
  auto entry = DecodeCachedValue(Blob(EncodeCachedValue(key, InferResponse{}, 0)));
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_TRUE((*entry)->outputs.empty());
}

TEST(CachedValueTest, EveryTruncationIsRejected) {
  const std::string value = EncodeCachedValue(MakeKey(), MakeResponse(), 0);
  for (size_t length = 0; length < value.size(); ++length) {
    EXPECT_FALSE(DecodeCachedValue(Blob(value.substr(0, length))).ok()) << "length " << length;
  }
}

TEST(CachedValueTest, EverySingleBitFlipIsRejected) {
  const std::string value = EncodeCachedValue(MakeKey(), MakeResponse(), 0);
  for (size_t i = 0; i < value.size(); ++i) {
    for (int bit = 0; bit < 8; bit += 3) {
      std::string corrupt = value;
      corrupt[i] = static_cast<char>(corrupt[i] ^ (1 << bit));
      EXPECT_FALSE(DecodeCachedValue(Blob(std::move(corrupt))).ok()) << "byte " << i;
    }
  }
}

TEST(CachedValueTest, OtherFormatVersionIsRejectedByName) {
  std::string value = EncodeCachedValue(MakeKey(), MakeResponse(), 0);
  value[4] = static_cast<char>(kCachedValueFormatVersion + 1);
  auto decoded = DecodeCachedValue(Blob(std::move(value)));
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(decoded.status().message(), HasSubstr("format version"));
}

// Re-seals a tampered value with a valid checksum so the structural checks behind it run.
std::string Reseal(std::string body) {
  ByteWriter(&body).U64(XXH3_64bits(body.data(), body.size()));
  return body;
}

TEST(CachedValueTest, StructurallyInvalidValuesAreRejectedEvenWithAValidChecksum) {
  const std::string value = EncodeCachedValue(MakeKey(), MakeResponse(), 0);
  const std::string body = value.substr(0, value.size() - 8);
  ASSERT_TRUE(DecodeCachedValue(Blob(Reseal(body))).ok());

  // Trailing garbage after the last output.
  EXPECT_FALSE(DecodeCachedValue(Blob(Reseal(body + "x"))).ok());
  // A claimed output count far beyond what the bytes hold.
  {
    InferResponse none;
    std::string empty = EncodeCachedValue(MakeKey(), none, 0);
    std::string tampered = empty.substr(0, empty.size() - 8 - 4);
    ByteWriter(&tampered).U32(1'000'000);
    EXPECT_FALSE(DecodeCachedValue(Blob(Reseal(tampered))).ok());
  }
  // The float output's shape no longer matches its byte size: [2,3] -> [2,4].
  {
    const std::string probs_shape = std::string("\x02\x00\x00\x00\x00\x00\x00\x00", 8) +
                                    std::string("\x03\x00\x00\x00\x00\x00\x00\x00", 8);
    const size_t at = body.find(probs_shape);
    ASSERT_NE(at, std::string::npos);
    std::string tampered = body;
    tampered[at + 8] = '\x04';
    auto decoded = DecodeCachedValue(Blob(Reseal(tampered)));
    ASSERT_FALSE(decoded.ok());
    EXPECT_THAT(decoded.status().message(), HasSubstr("probs"));
  }
}

TEST(CachedValueTest, NullBlobIsRejected) { EXPECT_FALSE(DecodeCachedValue(nullptr).ok()); }

}  // namespace
}  // namespace brigade::cache
