#ifndef BRIGADE_PROCESS_WORDPIECE_TOKENIZER_H_
#define BRIGADE_PROCESS_WORDPIECE_TOKENIZER_H_

// WordPieceTokenizer: one UTF-8 sentence to BERT's model inputs, with BERT's semantics (its
// BasicTokenizer followed by its greedy WordpieceTokenizer), against a standard `vocab.txt`:
//
//   clean      U+0000, U+FFFD and every other character of a C* category (control, format,
//              unassigned, private use) are dropped, except tab, CR and LF, which are
//              whitespace like every Zs, Zl and Zp character
//   CJK        each CJK ideograph (the CJK Unified Ideographs blocks and their extensions, the
//              compatibility ideographs) becomes a word of its own
//   words      the text splits at whitespace; each word, when lower_case, is lower-cased as a
//              whole (Unicode's full case mapping, final sigma included), then, when
//              strip_accents, decomposed (NFD) with its nonspacing marks (Mn) dropped
//   punctuation  every ASCII punctuation character (!../, :..@, [..`, {..~) and every P*
//              character becomes a word of its own
//   wordpiece  per word, greedy longest-match-first against the vocabulary: the first piece as
//              written, later ones as "##piece"; a word with a position no piece matches, or
//              longer than max_input_chars_per_word code points, is one [UNK]
//   encode     [CLS] pieces... [SEP], the pieces truncated to max_length - 2 so [SEP] stays,
//              then [PAD] up to max_length; attention_mask 1 for every token but padding;
//              token_type_ids 0 (one segment)
//
// Text is not NFC-normalised first (neither does BERT's reference). The Unicode data is ICU's
// (Debian's libicu72), so a character newer than ICU's Unicode version is unassigned (dropped).
//
// The vocabulary: one token per line, id = line number from 0, the line without its trailing
// "\n" or "\r\n" (an empty line is an id too); when a token appears twice the later id wins, as
// in BERT's loader. It must hold [PAD], [UNK], [CLS] and [SEP]. The pieces are held in two
// byte tries (first pieces, "##" pieces), so a match costs one step per byte of the word.
//
// Thread safety: immutable after Create; Tokenize and Encode may be called from any number of
// threads at once (their scratch buffers are per thread, reused across calls, so a call
// allocates only when a word is longer than any seen before on that thread).
// Ownership: Create returns the only owner; nothing refers to the vocabulary text afterwards.
// Failure: Create answers INVALID_ARGUMENT for a vocabulary over kMaxVocabBytes, a token over
// kMaxTokenBytes or not UTF-8 (naming its line), or a missing special token; ReadFile also
// NOT_FOUND / FAILED_PRECONDITION for a file it cannot read. Tokenize and Encode answer
// INVALID_ARGUMENT for text that is not UTF-8, naming the byte offset; the caller names which
// text it was. Nothing is written to the outputs then.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace brigade::process {

// Bounds checked before anything is allocated for a vocabulary. BERT's vocabularies are
// 30522 (English) to 119547 (multilingual) tokens, about 1 MB.
inline constexpr size_t kMaxVocabBytes = size_t{64} << 20;
inline constexpr size_t kMaxTokenBytes = 1024;
// Longest max_length Encode is built for (the step's bound too).
inline constexpr int kMaxEncodeLength = 8192;

struct WordPieceOptions {
  bool lower_case = true;
  bool strip_accents = true;
  // BERT's max_input_chars_per_word: longer words are one [UNK].
  int max_input_chars_per_word = 100;
};

class WordPieceTokenizer {
 public:
  // `vocab` is the text of a vocab.txt.
  static absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> Create(
      std::string_view vocab, const WordPieceOptions& options);
  // Reads the file at `path` (bounded by kMaxVocabBytes before reading) and calls Create.
  static absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> ReadFile(
      const std::string& path, const WordPieceOptions& options);

  ~WordPieceTokenizer();
  WordPieceTokenizer(const WordPieceTokenizer&) = delete;
  WordPieceTokenizer& operator=(const WordPieceTokenizer&) = delete;

  const WordPieceOptions& options() const { return options_; }
  // Lines of the vocabulary (one more than the largest id).
  int64_t vocab_size() const { return vocab_size_; }
  int64_t pad_id() const { return pad_id_; }
  int64_t unk_id() const { return unk_id_; }
  int64_t cls_id() const { return cls_id_; }
  int64_t sep_id() const { return sep_id_; }

  // Appends the ids of `text`'s pieces to `ids`: no [CLS]/[SEP], no truncation.
  absl::Status Tokenize(std::string_view text, std::vector<int64_t>* ids) const;

  // BERT's model inputs for `text`: each span holds max_length elements (2..kMaxEncodeLength,
  // the same for all three); token_type_ids may be empty (not wanted). Returns the number of
  // tokens before padding.
  absl::StatusOr<int64_t> Encode(std::string_view text, std::span<int64_t> input_ids,
                                 std::span<int64_t> attention_mask,
                                 std::span<int64_t> token_type_ids) const;

 private:
  struct Trie;

  WordPieceTokenizer(const WordPieceOptions& options, std::unique_ptr<Trie> first,
                     std::unique_ptr<Trie> continuation);

  // Calls emit(id) for each piece until it returns false; the text must be valid UTF-8.
  template <typename Emit>
  void ForEachPiece(std::string_view text, Emit&& emit) const;
  // One word's pieces (UTF-8, already normalised); false when emit stopped.
  template <typename Emit>
  bool WordPieces(std::string_view word, Emit&& emit) const;

  const WordPieceOptions options_;
  const std::unique_ptr<Trie> first_;
  const std::unique_ptr<Trie> continuation_;
  int64_t vocab_size_ = 0;
  int64_t pad_id_ = -1;
  int64_t unk_id_ = -1;
  int64_t cls_id_ = -1;
  int64_t sep_id_ = -1;
};

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_WORDPIECE_TOKENIZER_H_
