#include "cache/cache_key.h"

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::cache {
namespace {

Tensor Floats(Shape shape, std::vector<float> values) {
  return *Tensor::FromValues<float>(std::move(shape), values);
}

InferRequest MakeRequest() {
  InferRequest request;
  request.id = "r1";
  request.model_name = "classifier";
  request.inputs.push_back({"image", Floats({1, 4}, {1, 2, 3, 4}), {}});
  request.inputs.push_back(
      {"mask", *Tensor::FromValues<int64_t>({2}, std::vector<int64_t>{7, 8}), {}});
  request.parameters.Set("temperature", 0.5);
  return request;
}

KeyBuilder Builder(std::vector<std::string> key_parameters = {"temperature", "top_k"}) {
  return KeyBuilder(KeyBuilder::Options{std::move(key_parameters), nullptr});
}

TEST(CacheKeyTest, IdenticalRequestsGetIdenticalKeys) {
  InferRequest a = MakeRequest();
  InferRequest b = MakeRequest();
  const CacheKey ka = Builder().Build(a, 1, "fp");
  const CacheKey kb = Builder().Build(b, 1, "fp");
  EXPECT_EQ(ka.id, kb.id);
  EXPECT_EQ(ka.check, kb.check);
  EXPECT_EQ(ka.descriptor, kb.descriptor);
  EXPECT_TRUE(ka == kb);
  EXPECT_NE(ka.id, ka.check) << "the check digest must be independent of the id";
  EXPECT_EQ(ka.model_name, "classifier");
  EXPECT_EQ(ka.version, 1);
  EXPECT_EQ(ka.id.Hex().size(), 32u);
}

struct Mutation {
  std::string name;
  std::function<void(InferRequest&, int64_t& version, std::string& fingerprint)> apply;
};

TEST(CacheKeyTest, EveryFieldThatCanChangeTheAnswerChangesTheKey) {
  const std::vector<Mutation> mutations = {
      {"model name", [](InferRequest& r, int64_t&, std::string&) { r.model_name = "other"; }},
      {"version", [](InferRequest&, int64_t& v, std::string&) { v = 2; }},
      {"fingerprint", [](InferRequest&, int64_t&, std::string& f) { f = "fp2"; }},
      {"input name", [](InferRequest& r, int64_t&, std::string&) { r.inputs[0].name = "picture"; }},
      {"input datatype (same bytes)",
       [](InferRequest& r, int64_t&, std::string&) {
         Tensor t = r.inputs[0].tensor;
         r.inputs[0].tensor = *Tensor::Copy(DataType::kInt32, {1, 4}, t.bytes());
       }},
      {"input shape (same bytes)",
       [](InferRequest& r, int64_t&, std::string&) {
         r.inputs[0].tensor = *r.inputs[0].tensor.Reshaped({4, 1});
       }},
      {"input bytes",
       [](InferRequest& r, int64_t&, std::string&) {
         r.inputs[0].tensor = Floats({1, 4}, {1, 2, 3, 4.5f});
       }},
      {"second input bytes",
       [](InferRequest& r, int64_t&, std::string&) {
         r.inputs[1].tensor = *Tensor::FromValues<int64_t>({2}, std::vector<int64_t>{7, 9});
       }},
      {"requested outputs (explicit vs all)",
       [](InferRequest& r, int64_t&, std::string&) {
         r.outputs.push_back({"probs", {}, false});
       }},
      {"listed request parameter value",
       [](InferRequest& r, int64_t&, std::string&) { r.parameters.Set("temperature", 0.7); }},
      {"listed request parameter type",
       [](InferRequest& r, int64_t&, std::string&) {
         r.parameters.Set("temperature", std::string("0.5"));
       }},
      {"listed request parameter added",
       [](InferRequest& r, int64_t&, std::string&) { r.parameters.Set("top_k", int64_t{3}); }},
      {"listed request parameter removed",
       [](InferRequest& r, int64_t&, std::string&) { r.parameters.Erase("temperature"); }},
  };
  InferRequest base_request = MakeRequest();
  const CacheKey base = Builder().Build(base_request, 1, "fp");
  for (const Mutation& mutation : mutations) {
    InferRequest request = MakeRequest();
    int64_t version = 1;
    std::string fingerprint = "fp";
    mutation.apply(request, version, fingerprint);
    const CacheKey key = Builder().Build(request, version, fingerprint);
    EXPECT_NE(key.id, base.id) << mutation.name;
    EXPECT_NE(key.check, base.check) << mutation.name;
    EXPECT_FALSE(base.Matches(key.id, key.check, key.descriptor)) << mutation.name;
  }
}

TEST(CacheKeyTest, RequestedOutputsTheirOrderAndParametersChangeTheKey) {
  auto key_with = [](std::vector<RequestedOutput> outputs) {
    InferRequest request = MakeRequest();
    request.outputs = std::move(outputs);
    return Builder().Build(request, 1, "");
  };
  Parameters top3;
  top3.Set("classification", int64_t{3});
  const CacheKey probs = key_with({{"probs", {}, false}});
  const CacheKey both = key_with({{"probs", {}, false}, {"logits", {}, false}});
  const CacheKey swapped = key_with({{"logits", {}, false}, {"probs", {}, false}});
  const CacheKey classified = key_with({{"probs", top3, false}});
  EXPECT_NE(probs.id, both.id);
  EXPECT_NE(both.id, swapped.id);
  EXPECT_NE(probs.id, classified.id);
  // The HTTP binary_data choice changes only the encoding, never the answer.
  EXPECT_EQ(probs.id, key_with({{"probs", {}, true}}).id);
}

TEST(CacheKeyTest, FieldsThatCannotChangeTheAnswerLeaveTheKeyAlone) {
  InferRequest base_request = MakeRequest();
  const CacheKey base = Builder().Build(base_request, 1, "fp");
  InferRequest request = MakeRequest();
  request.id = "another id";
  request.priority = 1;
  request.parameters.Set("timeout", int64_t{5000});  // not a key parameter
  request.parameters.Set("cache_control", std::string("refresh"));
  request.inputs[0].parameters.Set("shared_memory_region", std::string("x"));
  request.all_outputs_binary = true;
  const CacheKey key = Builder().Build(request, 1, "fp");
  EXPECT_TRUE(key == base);
}

TEST(CacheKeyTest, KeyParameterListOrderAndDuplicatesDoNotMatter) {
  InferRequest request = MakeRequest();
  request.parameters.Set("top_k", int64_t{5});
  EXPECT_TRUE(Builder({"top_k", "temperature", "top_k"}).Build(request, 1, "") ==
              Builder({"temperature", "top_k"}).Build(request, 1, ""));
}

TEST(CacheKeyTest, OutputParameterInsertionOrderDoesNotMatter) {
  Parameters ab;
  ab.Set("a", int64_t{1});
  ab.Set("b", true);
  Parameters ba;
  ba.Set("b", true);
  ba.Set("a", int64_t{1});
  InferRequest r1 = MakeRequest();
  r1.outputs.push_back({"probs", ab, false});
  InferRequest r2 = MakeRequest();
  r2.outputs.push_back({"probs", ba, false});
  EXPECT_TRUE(Builder().Build(r1, 1, "") == Builder().Build(r2, 1, ""));
}

TEST(CacheKeyTest, LastByteOfALargeInputChangesBothDigests) {
  // Larger than the 64 KiB hashing chunk, so the change lands in a later chunk.
  std::vector<float> values(200'000, 0.25f);
  InferRequest r1;
  r1.model_name = "m";
  r1.inputs.push_back({"x", Floats({200'000}, values), {}});
  values.back() = 0.5f;
  InferRequest r2;
  r2.model_name = "m";
  r2.inputs.push_back({"x", Floats({200'000}, values), {}});
  const CacheKey k1 = Builder().Build(r1, 1, "");
  const CacheKey k2 = Builder().Build(r2, 1, "");
  EXPECT_EQ(k1.descriptor, k2.descriptor);
  EXPECT_NE(k1.id, k2.id);
  EXPECT_NE(k1.check, k2.check);
}

Hash128 ConstantId(const CacheKey&) { return {42, 42}; }

TEST(CacheKeyTest, ForcedIdCollisionIsStillTellableApart) {
  KeyBuilder colliding(KeyBuilder::Options{{"temperature"}, &ConstantId});
  InferRequest a = MakeRequest();
  InferRequest b = MakeRequest();
  b.inputs[0].tensor = Floats({1, 4}, {9, 9, 9, 9});  // same structure, other bytes
  InferRequest c = MakeRequest();
  c.inputs[0].name = "other";  // other structure
  const CacheKey ka = colliding.Build(a, 1, "");
  const CacheKey kb = colliding.Build(b, 1, "");
  const CacheKey kc = colliding.Build(c, 1, "");
  ASSERT_EQ(ka.id, kb.id);
  ASSERT_EQ(ka.id, kc.id);
  EXPECT_FALSE(ka.Matches(kb.id, kb.check, kb.descriptor)) << "bytes differ: check digest";
  EXPECT_FALSE(ka.Matches(kc.id, kc.check, kc.descriptor)) << "structure differs: descriptor";
  EXPECT_TRUE(ka.Matches(ka.id, ka.check, ka.descriptor));
}

TEST(CacheKeyTest, BytesTensorsAreKeyedByTheirElements) {
  std::vector<std::string> words = {"ab", "c"};
  std::vector<std::string> other = {"a", "bc"};
  InferRequest r1;
  r1.model_name = "m";
  r1.inputs.push_back({"text", *Tensor::FromStrings({2}, words), {}});
  InferRequest r2;
  r2.model_name = "m";
  r2.inputs.push_back({"text", *Tensor::FromStrings({2}, other), {}});
  EXPECT_NE(Builder().Build(r1, 1, "").id, Builder().Build(r2, 1, "").id);
}

}  // namespace
}  // namespace brigade::cache
