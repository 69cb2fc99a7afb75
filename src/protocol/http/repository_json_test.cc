#include "protocol/http/repository_json.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::protocol::http {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<bool> Index(std::string_view body) {
  return DecodeRepositoryIndexRequest(*BodyBuffer::FromString(body));
}
absl::StatusOr<protocol::LoadModelRequest> Load(std::string_view body) {
  return DecodeLoadModelRequest("m", *BodyBuffer::FromString(body));
}
absl::Status Unload(std::string_view body) {
  return DecodeUnloadModelRequest(*BodyBuffer::FromString(body));
}
std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(RepositoryCodecTest, IndexRequestReadyFlag) {
  EXPECT_EQ(*Index(""), false);
  EXPECT_EQ(*Index(" \n"), false);
  EXPECT_EQ(*Index("{}"), false);
  EXPECT_EQ(*Index(R"({"ready":true})"), true);
  EXPECT_THAT(Message(Index(R"({"ready":1})").status()), HasSubstr("'ready'"));
  EXPECT_THAT(Message(Index(R"({"repository":"x"})").status()), HasSubstr("'repository'"));
  EXPECT_THAT(Message(Index(R"({"ready":true)").status()), HasSubstr("malformed JSON"));
}

TEST(RepositoryCodecTest, LoadRequestCarriesConfigOverride) {
  auto plain = Load("");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->name, "m");
  EXPECT_TRUE(plain->config_json.empty());
  auto with_config = Load(R"({"parameters":{"config":"{\"max_batch_size\":8}"}})");
  ASSERT_TRUE(with_config.ok()) << with_config.status();
  EXPECT_EQ(with_config->config_json, R"({"max_batch_size":8})");
}

TEST(RepositoryCodecTest, LoadRequestRejectsWhatItCannotHonour) {
  EXPECT_EQ(Load(R"({"parameters":{"file:1/model.onnx":"AAAA"}})").status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Message(Load(R"({"parameters":{"config":{"max_batch_size":8}}})").status()),
              HasSubstr("'config' must be a string"));
  EXPECT_THAT(Message(Load(R"({"parameters":{"cfg":"x"}})").status()), HasSubstr("'cfg'"));
  EXPECT_THAT(Message(Load(R"({"config":"x"})").status()), HasSubstr("unknown field 'config'"));
  EXPECT_THAT(Message(Load(R"({"parameters":[]})").status()), HasSubstr("JSON object"));
}

TEST(RepositoryCodecTest, UnloadRequest) {
  EXPECT_TRUE(Unload("").ok());
  EXPECT_TRUE(Unload(R"({"parameters":{"unload_dependents":false}})").ok());
  const absl::Status dependents = Unload(R"({"parameters":{"unload_dependents":true}})");
  EXPECT_EQ(dependents.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Message(dependents), HasSubstr("unload_dependents"));
  EXPECT_THAT(Message(Unload(R"({"parameters":{"unload_dependents":"yes"}})")),
              HasSubstr("unload_dependents"));
  EXPECT_THAT(Message(Unload(R"({"parameters":{"x":1}})")), HasSubstr("'x'"));
}

TEST(RepositoryCodecTest, CacheInvalidateScopeIsAllModelOrVersion) {
  auto decode = [](std::string_view body) {
    return DecodeCacheInvalidateRequest(*BodyBuffer::FromString(body));
  };
  auto all = decode("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->model_name, "");
  EXPECT_EQ(all->model_version, -1);
  auto model = decode(R"({"model_name":"m"})");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->model_name, "m");
  EXPECT_EQ(model->model_version, -1);
  auto version = decode(R"({"model_name":"m","model_version":"3"})");
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->model_version, 3);

  for (std::string_view bad :
       {R"({"model_version":"3"})", R"({"model_name":"m","model_version":"x"})",
        R"({"model_name":7})", R"({"model":"m"})", "[]", "{"}) {
    EXPECT_EQ(decode(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(RepositoryCodecTest, IndexOmitsEmptyVersionAndReason) {
  std::vector<protocol::RepositoryIndexEntry> entries{{"a", "1", "READY", ""},
                                                      {"b", "", "UNAVAILABLE", "load failed"}};
  EXPECT_EQ(EncodeRepositoryIndex(entries),
            R"([{"name":"a","version":"1","state":"READY"},)"
            R"({"name":"b","state":"UNAVAILABLE","reason":"load failed"}])");
}

}  // namespace
}  // namespace brigade::protocol::http
