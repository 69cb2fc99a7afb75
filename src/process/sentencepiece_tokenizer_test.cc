#include "process/sentencepiece_tokenizer.h"

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "process/test_util.h"

namespace brigade::process {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<SentencePieceTokenizer> Make(SentencePieceOptions options = {}) {
  absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> tokenizer =
      SentencePieceTokenizer::Create(testing::ReadTestFile("spm_test.model"), options);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? std::move(*tokenizer) : nullptr;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(SentencePieceTokenizerTest, EncodesAsSpmEncodeDoes) {
  auto tokenizer = Make();
  EXPECT_EQ(tokenizer->vocab_size(), 400);
  const std::vector<std::string> sentences = Lines(testing::ReadTestFile("spm_sentences.txt"));
  const std::vector<std::string> want = Lines(testing::ReadTestFile("spm_sentences.ids"));
  ASSERT_EQ(sentences.size(), want.size());
  ASSERT_FALSE(sentences.empty());
  for (size_t i = 0; i < sentences.size(); ++i) {
    std::vector<int64_t> ids;
    ASSERT_TRUE(tokenizer->Tokenize(sentences[i], &ids).ok());
    std::string got;
    for (const int64_t id : ids) {
      if (!got.empty()) got += ' ';
      got += std::to_string(id);
    }
    EXPECT_EQ(got, want[i]) << sentences[i];
  }
}

TEST(SentencePieceTokenizerTest, EncodeAddsBosAndEosTruncatesKeepingEosAndPads) {
  SentencePieceOptions options;
  options.add_bos = true;
  options.add_eos = true;
  auto tokenizer = Make(options);
  EXPECT_EQ(tokenizer->pad_id(), 3);
  std::vector<int64_t> ids(6), mask(6);
  // "This License applies..." is 198 32 10 36 36 37 ... (spm_sentences.ids).
  absl::StatusOr<int64_t> count =
      tokenizer->Encode("This License applies to any program or other work.", ids, mask);
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 6);
  EXPECT_THAT(ids, ElementsAre(1, 198, 32, 10, 36, 2));
  EXPECT_THAT(mask, ElementsAre(1, 1, 1, 1, 1, 1));
  count = Make()->Encode("", ids, mask);
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 0);
  EXPECT_THAT(ids, ElementsAre(3, 3, 3, 3, 3, 3));
  EXPECT_THAT(mask, ElementsAre(0, 0, 0, 0, 0, 0));
  std::vector<int64_t> two(2), two_mask(2);
  EXPECT_EQ(tokenizer->Encode("x", two, two_mask).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SentencePieceTokenizerTest, InvalidUtf8IsRefusedNamingTheByteOffset) {
  auto tokenizer = Make();
  std::vector<int64_t> ids(4, 9), mask(4, 9);
  absl::StatusOr<int64_t> count = tokenizer->Encode("ok \xE2\x82", ids, mask);
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(count.status().message()), HasSubstr("not valid UTF-8 at byte 3"));
  EXPECT_THAT(ids, ElementsAre(9, 9, 9, 9));
}

TEST(SentencePieceTokenizerTest, AModelItCannotLoadIsRefused) {
  absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> tokenizer =
      SentencePieceTokenizer::Create("not a model", {});
  EXPECT_EQ(tokenizer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(tokenizer.status().message()),
              HasSubstr("cannot load the SentencePiece model"));
}

TEST(SentencePieceTokenizerTest, ManyThreadsEncodeAtOnce) {
  auto tokenizer = Make();
  const std::string text = "You may convey a work based on the Program, or the modifications.";
  std::vector<int64_t> want;
  ASSERT_TRUE(tokenizer->Tokenize(text, &want).ok());
  std::vector<std::vector<int64_t>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        got[t].clear();
        if (!tokenizer->Tokenize(text, &got[t]).ok()) return;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& ids : got) EXPECT_EQ(ids, want);
}

}  // namespace
}  // namespace brigade::process
