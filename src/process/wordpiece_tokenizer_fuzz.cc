// libFuzzer target: the WordPiece tokenizer must accept any valid UTF-8 and refuse anything
// else without crashing or reading out of bounds, and what it gives must be well formed: every
// id in the vocabulary, Encode framed as [CLS] pieces [SEP] [PAD]... with the mask to match,
// and Encode's pieces a prefix of Tokenize's. The first byte picks lower_case, strip_accents
// and max_length (2..65); the rest is the text. The vocabulary is small and fixed, with
// multi-byte pieces that share leading bytes (é/e, 😀/😁), so the byte tries' matches must stop
// at code point boundaries.
// Build: see CMakeLists.txt (BRIGADE_FUZZ).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "process/utf8.h"
#include "process/wordpiece_tokenizer.h"

namespace {

constexpr std::string_view kVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n##a\nb\n##b\nab\n##ab\nthe\n##s\n,\n.\n!\n"
    "é\n##é\ne\n##e\n中\n文\nσ\nς\n##ς\nи\n##и\n😀\n##😀\n😁\n\n";

const brigade::process::WordPieceTokenizer& Tokenizer(int variant) {
  static const auto* tokenizers = [] {
    auto* all = new std::vector<std::unique_ptr<brigade::process::WordPieceTokenizer>>();
    for (int v = 0; v < 4; ++v) {
      brigade::process::WordPieceOptions options;
      options.lower_case = (v & 1) != 0;
      options.strip_accents = (v & 2) != 0;
      options.max_input_chars_per_word = 20;
      auto tokenizer = brigade::process::WordPieceTokenizer::Create(kVocab, options);
      if (!tokenizer.ok()) std::abort();
      all->push_back(std::move(*tokenizer));
    }
    return all;
  }();
  return *(*tokenizers)[variant];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto& tokenizer = Tokenizer(flags & 3);
  const size_t max_length = 2 + (flags >> 2);
  const bool valid = brigade::process::FindInvalidUtf8(text) == std::string_view::npos;

  std::vector<int64_t> pieces;
  const absl::Status status = tokenizer.Tokenize(text, &pieces);
  if (status.ok() != valid) std::abort();
  for (const int64_t id : pieces) {
    if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
  }

  std::vector<int64_t> ids(max_length, -1), mask(max_length, -1), types(max_length, -1);
  const absl::StatusOr<int64_t> count = tokenizer.Encode(text, ids, mask, types);
  if (count.ok() != valid) std::abort();
  if (!valid) return 0;
  const auto n = static_cast<size_t>(*count);
  if (n < 2 || n > max_length || n != std::min(pieces.size(), max_length - 2) + 2) std::abort();
  if (ids[0] != tokenizer.cls_id() || ids[n - 1] != tokenizer.sep_id()) std::abort();
  for (size_t i = 0; i < max_length; ++i) {
    if (types[i] != 0 || mask[i] != (i < n ? 1 : 0)) std::abort();
    if (i >= n && ids[i] != tokenizer.pad_id()) std::abort();
    if (i > 0 && i + 1 < n && ids[i] != pieces[i - 1]) std::abort();
  }
  return 0;
}
