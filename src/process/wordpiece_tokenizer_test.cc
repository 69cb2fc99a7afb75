#include "process/wordpiece_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::process {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// id = index. "οδος" ends in a final sigma (U+03C2).
const std::vector<std::string> kTokens = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un",    "##aff", "##able", "hello", "world",
    ",",     "!",     ".",     "中",    "文",     "a",     "##a",   "cafe",   "«",     "$",
    "οδος",  "##s",   "Hello", "##é",   "naïve",  "naive", "i",     "̇",       "##ed",  "jump"};

std::string Vocab() {
  std::string text;
  for (const std::string& token : kTokens) text += token + "\n";
  return text;
}

int64_t Id(std::string_view token) {
  for (size_t i = 0; i < kTokens.size(); ++i) {
    if (kTokens[i] == token) return static_cast<int64_t>(i);
  }
  ADD_FAILURE() << "no token " << token;
  return -1;
}

std::vector<int64_t> Ids(std::initializer_list<std::string_view> tokens) {
  std::vector<int64_t> ids;
  for (std::string_view token : tokens) ids.push_back(Id(token));
  return ids;
}

std::unique_ptr<WordPieceTokenizer> Make(WordPieceOptions options = {}) {
  absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> tokenizer =
      WordPieceTokenizer::Create(Vocab(), options);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? std::move(*tokenizer) : nullptr;
}

std::vector<int64_t> Tokenize(const WordPieceTokenizer& tokenizer, std::string_view text) {
  std::vector<int64_t> ids;
  const absl::Status status = tokenizer.Tokenize(text, &ids);
  EXPECT_TRUE(status.ok()) << status;
  return ids;
}

TEST(WordPieceTokenizerTest, GreedyLongestMatchWithContinuationPieces) {
  auto tokenizer = Make();
  EXPECT_EQ(Tokenize(*tokenizer, "unaffable"), Ids({"un", "##aff", "##able"}));
  EXPECT_EQ(Tokenize(*tokenizer, "jumped jumps"), Ids({"jump", "##ed", "jump", "##s"}));
}

TEST(WordPieceTokenizerTest, AWordWithAnUnmatchedPositionIsOneUnknown) {
  auto tokenizer = Make();
  // "un" and "##aff" match, then nothing does: the matched pieces are dropped too.
  EXPECT_EQ(Tokenize(*tokenizer, "unaffx hello"), Ids({"[UNK]", "hello"}));
  EXPECT_EQ(Tokenize(*tokenizer, "zzz"), Ids({"[UNK]"}));
}

TEST(WordPieceTokenizerTest, WordsLongerThanTheLimitAreUnknown) {
  auto tokenizer = Make();
  EXPECT_EQ(Tokenize(*tokenizer, std::string(100, 'a')).size(), 100u);
  EXPECT_EQ(Tokenize(*tokenizer, std::string(101, 'a')), Ids({"[UNK]"}));
  WordPieceOptions options;
  options.max_input_chars_per_word = 3;
  EXPECT_EQ(Tokenize(*Make(options), "aaa aaaa"), Ids({"a", "##a", "##a", "[UNK]"}));
}

TEST(WordPieceTokenizerTest, LowerCasesAndStripsAccentsPerOption) {
  EXPECT_EQ(Tokenize(*Make(), "HeLLo Café NAÏVE"), Ids({"hello", "cafe", "naive"}));
  WordPieceOptions cased;
  cased.lower_case = false;
  cased.strip_accents = false;
  EXPECT_EQ(Tokenize(*Make(cased), "Hello hello naïve Hello"),
            Ids({"Hello", "hello", "naïve", "Hello"}));
  // Lower-casing without stripping keeps the accent as a character of its own piece.
  WordPieceOptions lower_only;
  lower_only.strip_accents = false;
  EXPECT_EQ(Tokenize(*Make(lower_only), "NAÏVE HELLO"), Ids({"naïve", "hello"}));
  WordPieceOptions strip_only;
  strip_only.lower_case = false;
  EXPECT_EQ(Tokenize(*Make(strip_only), "naïve Hello"), Ids({"naive", "Hello"}));
}

TEST(WordPieceTokenizerTest, LowerCasingIsUnicodesFullMappingOfTheWholeWord) {
  auto tokenizer = Make();
  // A capital sigma at the end of a word lower-cases to the final form.
  EXPECT_EQ(Tokenize(*tokenizer, "ΟΔΟΣ"), Ids({"οδος"}));
  // U+0130 lower-cases to "i" + U+0307 (two code points); accent stripping drops the mark.
  EXPECT_EQ(Tokenize(*tokenizer, "İ"), Ids({"i"}));
}

TEST(WordPieceTokenizerTest, PunctuationAndCjkAreWordsOfTheirOwn) {
  auto tokenizer = Make();
  EXPECT_EQ(Tokenize(*tokenizer, "hello,world!"), Ids({"hello", ",", "world", "!"}));
  // "$" is a symbol (Sc) that BERT counts as punctuation for being in an ASCII range; "«" is Pi.
  EXPECT_EQ(Tokenize(*tokenizer, "$hello«world"), Ids({"$", "hello", "«", "world"}));
  EXPECT_EQ(Tokenize(*tokenizer, "hello中文world"), Ids({"hello", "中", "文", "world"}));
}

TEST(WordPieceTokenizerTest, CleansControlCharactersAndSplitsAtUnicodeWhitespace) {
  auto tokenizer = Make();
  // NUL, U+FFFD, a zero width space (Cf) and a private-use character vanish inside a word.
  EXPECT_EQ(Tokenize(*tokenizer, std::string("hel\0lo", 6)), Ids({"hello"}));
  EXPECT_EQ(Tokenize(*tokenizer, "hel\xEF\xBF\xBDlo wor\u200Bld he\uE000llo"),
            Ids({"hello", "world", "hello"}));
  // No-break space (Zs), line separator (Zl), tab, CR and LF separate words.
  EXPECT_EQ(Tokenize(*tokenizer, "hello\u00A0world\u2028hello\tworld\r\nhello"),
            Ids({"hello", "world", "hello", "world", "hello"}));
  EXPECT_TRUE(Tokenize(*tokenizer, " \t\x01 ").empty());
}

TEST(WordPieceTokenizerTest, EncodeFramesTruncatesKeepingSepAndPads) {
  auto tokenizer = Make();
  std::vector<int64_t> ids(8), mask(8), types(8, 7);
  absl::StatusOr<int64_t> count = tokenizer->Encode("hello world", ids, mask, types);
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 4);
  EXPECT_EQ(ids, Ids({"[CLS]", "hello", "world", "[SEP]", "[PAD]", "[PAD]", "[PAD]", "[PAD]"}));
  EXPECT_THAT(mask, ElementsAre(1, 1, 1, 1, 0, 0, 0, 0));
  EXPECT_THAT(types, ElementsAre(0, 0, 0, 0, 0, 0, 0, 0));

  std::vector<int64_t> short_ids(4), short_mask(4);
  count = tokenizer->Encode("unaffable hello world", short_ids, short_mask, {});
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 4);
  EXPECT_EQ(short_ids, Ids({"[CLS]", "un", "##aff", "[SEP]"}));
  EXPECT_THAT(short_mask, ElementsAre(1, 1, 1, 1));

  count = tokenizer->Encode("", short_ids, short_mask, {});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(short_ids, Ids({"[CLS]", "[SEP]", "[PAD]", "[PAD]"}));
}

TEST(WordPieceTokenizerTest, EncodeRefusesOutputsOfMismatchedLengths) {
  auto tokenizer = Make();
  std::vector<int64_t> a(4), b(3), one(1);
  EXPECT_EQ(tokenizer->Encode("x", a, b, {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tokenizer->Encode("x", one, one, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(WordPieceTokenizerTest, InvalidUtf8IsRefusedNamingTheByteOffset) {
  auto tokenizer = Make();
  std::vector<int64_t> ids;
  for (const auto& [text, offset] : std::vector<std::pair<std::string, int>>{
           {"abc\xFF", 3},           // not a lead byte
           {"a\xC0\x80", 1},         // overlong NUL
           {"ab\xED\xA0\x80", 2},    // a surrogate
           {"\xF4\x90\x80\x80", 0},  // above U+10FFFF
           {"hello \xE4\xB8", 6},    // truncated
           {"x\xE4\x41\x80", 1}}) {  // a continuation byte missing
    const absl::Status status = tokenizer->Tokenize(text, &ids);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(status.message()), HasSubstr("at byte " + std::to_string(offset)));
  }
  EXPECT_TRUE(ids.empty());
  std::vector<int64_t> out(4, 9), mask(4, 9);
  EXPECT_FALSE(tokenizer->Encode("hello\xFF", out, mask, {}).ok());
  EXPECT_THAT(out, ElementsAre(9, 9, 9, 9));
}

TEST(WordPieceTokenizerTest, VocabularyRulesAndItsErrors) {
  // CRLF lines, and a later duplicate takes the id.
  auto tokenizer = WordPieceTokenizer::Create("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nhi\r\nhi", {});
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->vocab_size(), 6);
  std::vector<int64_t> ids;
  ASSERT_TRUE((*tokenizer)->Tokenize("hi", &ids).ok());
  EXPECT_THAT(ids, ElementsAre(5));

  auto message = [](std::string_view vocab) {
    return std::string(WordPieceTokenizer::Create(vocab, {}).status().message());
  };
  EXPECT_THAT(message("[PAD]\n[UNK]\n[CLS]\nhi\n"), HasSubstr("vocabulary has no [SEP] token"));
  EXPECT_THAT(message("[PAD]\n[UNK]\n[CLS]\n[SEP]\n" + std::string(kMaxTokenBytes + 1, 'x')),
              HasSubstr("vocabulary line 5 is 1025 bytes"));
  EXPECT_THAT(message("[PAD]\n[UNK]\n\xFF\n"), HasSubstr("vocabulary line 3 is not valid UTF-8"));
  EXPECT_THAT(
      std::string(WordPieceTokenizer::ReadFile("/nonexistent/vocab.txt", {}).status().message()),
      HasSubstr("cannot read vocabulary /nonexistent/vocab.txt"));
}

TEST(WordPieceTokenizerTest, ReadsAVocabularyFile) {
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / "wordpiece_test_vocab.txt";
  std::ofstream(path) << Vocab();
  absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> tokenizer =
      WordPieceTokenizer::ReadFile(path.string(), {});
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->vocab_size(), static_cast<int64_t>(kTokens.size()));
  EXPECT_EQ((*tokenizer)->sep_id(), 3);
  std::filesystem::remove(path);
}

TEST(WordPieceTokenizerTest, ManyThreadsTokenizeAtOnce) {
  auto tokenizer = Make();
  const std::string text = "HeLLo, unaffable 中文 world! NAÏVE jumps ΟΔΟΣ";
  const std::vector<int64_t> want = Tokenize(*tokenizer, text);
  std::vector<std::thread> threads;
  std::vector<std::vector<int64_t>> got(4);
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        got[t].clear();
        if (!tokenizer->Tokenize(text, &got[t]).ok()) return;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& ids : got) EXPECT_THAT(ids, ElementsAreArray(want));
}

}  // namespace
}  // namespace brigade::process
