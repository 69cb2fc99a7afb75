#include "process/wordpiece_tokenizer.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <utility>

#include "core/strings.h"
#include "process/utf8.h"

namespace brigade::process {

// A byte trie flattened into arrays: node i's children are edges [first, first + count), sorted
// by byte, so the build's temporary per-node vectors are gone once Create returns.
struct WordPieceTokenizer::Trie {
  struct Node {
    int32_t id = -1;  // the token ending here, or -1
    uint32_t first = 0;
    uint32_t count = 0;
  };
  std::vector<Node> nodes;
  std::vector<uint8_t> edge_bytes;
  std::vector<uint32_t> edge_nodes;

  // The child of `node` along `byte`, or 0 (the root is never a child).
  uint32_t Child(uint32_t node, uint8_t byte) const {
    const Node& n = nodes[node];
    const uint8_t* begin = edge_bytes.data() + n.first;
    const uint8_t* end = begin + n.count;
    const uint8_t* it =
        n.count <= 8 ? std::find(begin, end, byte) : std::lower_bound(begin, end, byte);
    return it != end && *it == byte ? edge_nodes[it - edge_bytes.data()] : 0;
  }

  // The longest token that is a prefix of `bytes` ending on a code point boundary: its id and
  // length, or {-1, 0}.
  std::pair<int32_t, size_t> LongestPrefix(std::string_view bytes) const {
    std::pair<int32_t, size_t> best{-1, 0};
    uint32_t node = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      node = Child(node, static_cast<uint8_t>(bytes[i]));
      if (node == 0) break;
      const int32_t id = nodes[node].id;
      if (id >= 0 && (i + 1 == bytes.size() || !IsUtf8Continuation(bytes[i + 1]))) {
        best = {id, i + 1};
      }
    }
    return best;
  }
};

namespace {

// Builds a Trie from (token, id) pairs; a later pair for the same token replaces the id.
class TrieBuilder {
 public:
  TrieBuilder() : children_(1), ids_(1, -1) {}

  void Add(std::string_view token, int32_t id) {
    uint32_t node = 0;
    for (const char c : token) {
      const auto byte = static_cast<uint8_t>(c);
      std::vector<std::pair<uint8_t, uint32_t>>& edges = children_[node];
      auto it = std::lower_bound(edges.begin(), edges.end(), byte,
                                 [](const auto& edge, uint8_t b) { return edge.first < b; });
      if (it != edges.end() && it->first == byte) {
        node = it->second;
        continue;
      }
      const auto child = static_cast<uint32_t>(children_.size());
      edges.insert(it, {byte, child});
      children_.emplace_back();
      ids_.push_back(-1);
      node = child;
    }
    ids_[node] = id;
  }

  // Flattens in breadth-first order, so every node's children are contiguous.
  template <typename Trie>
  void Build(Trie* trie) const {
    std::vector<uint32_t> order = {0};
    std::vector<uint32_t> index(children_.size(), 0);
    for (size_t i = 0; i < order.size(); ++i) {
      for (const auto& [byte, child] : children_[order[i]]) {
        index[child] = static_cast<uint32_t>(order.size());
        order.push_back(child);
      }
    }
    trie->nodes.resize(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      auto& node = trie->nodes[i];
      node.id = ids_[order[i]];
      node.first = static_cast<uint32_t>(trie->edge_bytes.size());
      node.count = static_cast<uint32_t>(children_[order[i]].size());
      for (const auto& [byte, child] : children_[order[i]]) {
        trie->edge_bytes.push_back(byte);
        trie->edge_nodes.push_back(index[child]);
      }
    }
  }

 private:
  std::vector<std::vector<std::pair<uint8_t, uint32_t>>> children_;
  std::vector<int32_t> ids_;
};

enum class CharClass : uint8_t { kDrop, kSpace, kPunct, kCjk, kOther };

constexpr bool IsAsciiPunctuation(char32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
         (c >= 123 && c <= 126);
}

constexpr bool IsCjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

constexpr CharClass AsciiClass(char32_t c) {
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return CharClass::kSpace;
  if (c < 32 || c == 127) return CharClass::kDrop;
  if (IsAsciiPunctuation(c)) return CharClass::kPunct;
  return CharClass::kOther;
}

constexpr std::array<CharClass, 128> kAsciiClasses = [] {
  std::array<CharClass, 128> classes{};
  for (char32_t c = 0; c < 128; ++c) classes[c] = AsciiClass(c);
  return classes;
}();

// Where a code point goes in BERT's cleaning, CJK and punctuation passes. Punctuation is only
// decided after lower-casing and NFD, which never turn a letter into punctuation, so one class
// serves both passes.
CharClass Classify(char32_t c) {
  if (c < 128) return kAsciiClasses[c];
  if (c == 0xFFFD) return CharClass::kDrop;
  const uint32_t mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  if (mask & U_GC_C_MASK) return CharClass::kDrop;
  if (mask & U_GC_Z_MASK) return CharClass::kSpace;
  if (IsCjk(c)) return CharClass::kCjk;
  if (mask & U_GC_P_MASK) return CharClass::kPunct;
  return CharClass::kOther;
}

bool IsNonspacingMark(char32_t c) {
  return c >= 0x300 && u_charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK;
}

// Per-thread buffers, reused by every call on the thread.
struct Scratch {
  std::vector<char32_t> token;  // one whitespace-separated token, cleaned
  std::vector<UChar> utf16;
  std::vector<UChar> lowered;
  std::vector<UChar> decomposed;
  std::vector<char32_t> normalised;
  std::string word;
  std::vector<int32_t> pieces;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

void ToUtf16(std::span<const char32_t> cps, std::vector<UChar>* out) {
  out->clear();
  for (const char32_t c : cps) {
    if (c < 0x10000) {
      out->push_back(static_cast<UChar>(c));
    } else {
      out->push_back(static_cast<UChar>(U16_LEAD(c)));
      out->push_back(static_cast<UChar>(U16_TRAIL(c)));
    }
  }
}

// Runs an ICU string function into `out`, growing it once when ICU says it is too short.
template <typename F>
void IcuInto(const std::vector<UChar>& in, std::vector<UChar>* out, F f) {
  out->resize(std::max<size_t>(in.size() * 2 + 8, out->capacity()));
  UErrorCode error = U_ZERO_ERROR;
  int32_t length = f(in, out, &error);
  if (error == U_BUFFER_OVERFLOW_ERROR) {
    out->resize(static_cast<size_t>(length));
    error = U_ZERO_ERROR;
    length = f(in, out, &error);
  }
  // The inputs are valid UTF-16 (made from valid UTF-8), so ICU has no other failure here;
  // should it fail anyway, the token passes through unchanged rather than being lost.
  if (U_FAILURE(error)) {
    *out = in;
    return;
  }
  out->resize(static_cast<size_t>(length));
}

const UNormalizer2* Nfd() {
  static const UNormalizer2* nfd = [] {
    UErrorCode error = U_ZERO_ERROR;
    const UNormalizer2* n = unorm2_getNFDInstance(&error);
    return U_SUCCESS(error) ? n : nullptr;
  }();
  return nfd;
}

// Lower-cases and/or strips the accents of one token, as BERT does to each whitespace token.
void Normalise(const WordPieceOptions& options, Scratch& s) {
  s.normalised.clear();
  const bool ascii =
      std::all_of(s.token.begin(), s.token.end(), [](char32_t c) { return c < 128; });
  if (ascii) {
    for (const char32_t c : s.token) {
      s.normalised.push_back(options.lower_case && c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return;
  }
  ToUtf16(s.token, &s.utf16);
  const std::vector<UChar>* text = &s.utf16;
  if (options.lower_case) {
    IcuInto(*text, &s.lowered,
            [](const std::vector<UChar>& in, std::vector<UChar>* out, UErrorCode* error) {
              return u_strToLower(out->data(), static_cast<int32_t>(out->size()), in.data(),
                                  static_cast<int32_t>(in.size()), "", error);
            });
    text = &s.lowered;
  }
  if (options.strip_accents && Nfd() != nullptr) {
    IcuInto(*text, &s.decomposed,
            [](const std::vector<UChar>& in, std::vector<UChar>* out, UErrorCode* error) {
              return unorm2_normalize(Nfd(), in.data(), static_cast<int32_t>(in.size()),
                                      out->data(), static_cast<int32_t>(out->size()), error);
            });
    text = &s.decomposed;
  }
  const auto length = static_cast<int32_t>(text->size());
  for (int32_t i = 0; i < length;) {
    UChar32 c = 0;
    U16_NEXT(text->data(), i, length, c);
    if (options.strip_accents && IsNonspacingMark(static_cast<char32_t>(c))) continue;
    s.normalised.push_back(static_cast<char32_t>(c));
  }
}

absl::Status CheckUtf8(std::string_view text) {
  const size_t bad = FindInvalidUtf8(text);
  if (bad == std::string_view::npos) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat("text is not valid UTF-8 at byte ", bad));
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(const WordPieceOptions& options, std::unique_ptr<Trie> first,
                                       std::unique_ptr<Trie> continuation)
    : options_(options), first_(std::move(first)), continuation_(std::move(continuation)) {}

WordPieceTokenizer::~WordPieceTokenizer() = default;

absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::Create(
    std::string_view vocab, const WordPieceOptions& options) {
  if (vocab.size() > kMaxVocabBytes) {
    return absl::InvalidArgumentError(
        StrCat("vocabulary is ", vocab.size(), " bytes, more than the limit of ", kMaxVocabBytes));
  }
  if (options.max_input_chars_per_word < 1) {
    return absl::InvalidArgumentError(StrCat("max_input_chars_per_word is ",
                                             options.max_input_chars_per_word, ", expected >= 1"));
  }
  if (Nfd() == nullptr) return absl::InternalError("ICU has no NFD normaliser");
  TrieBuilder first;
  TrieBuilder continuation;
  std::array<int64_t, 4> special = {-1, -1, -1, -1};
  constexpr std::array<std::string_view, 4> kSpecial = {"[PAD]", "[UNK]", "[CLS]", "[SEP]"};
  int64_t line = 0;
  for (std::string_view rest = vocab; !rest.empty(); ++line) {
    const size_t newline = rest.find('\n');
    std::string_view token = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    if (!token.empty() && token.back() == '\r') token.remove_suffix(1);
    if (token.size() > kMaxTokenBytes) {
      return absl::InvalidArgumentError(StrCat("vocabulary line ", line + 1, " is ", token.size(),
                                               " bytes, more than the limit of ", kMaxTokenBytes));
    }
    if (FindInvalidUtf8(token) != std::string_view::npos) {
      return absl::InvalidArgumentError(
          StrCat("vocabulary line ", line + 1, " is not valid UTF-8"));
    }
    if (line > INT32_MAX) return absl::InvalidArgumentError("vocabulary has too many lines");
    const auto id = static_cast<int32_t>(line);
    if (token.starts_with("##")) {
      continuation.Add(token.substr(2), id);
    } else {
      first.Add(token, id);
    }
    for (size_t i = 0; i < kSpecial.size(); ++i) {
      if (token == kSpecial[i]) special[i] = id;
    }
  }
  for (size_t i = 0; i < kSpecial.size(); ++i) {
    if (special[i] < 0) {
      return absl::InvalidArgumentError(StrCat("vocabulary has no ", kSpecial[i],
                                               " token (it needs [PAD], [UNK], [CLS] and "
                                               "[SEP], each on a line of its own)"));
    }
  }
  auto first_trie = std::make_unique<Trie>();
  auto continuation_trie = std::make_unique<Trie>();
  first.Build(first_trie.get());
  continuation.Build(continuation_trie.get());
  std::unique_ptr<WordPieceTokenizer> tokenizer(
      new WordPieceTokenizer(options, std::move(first_trie), std::move(continuation_trie)));
  tokenizer->vocab_size_ = line;
  tokenizer->pad_id_ = special[0];
  tokenizer->unk_id_ = special[1];
  tokenizer->cls_id_ = special[2];
  tokenizer->sep_id_ = special[3];
  return tokenizer;
}

absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::ReadFile(
    const std::string& path, const WordPieceOptions& options) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) {
    return absl::NotFoundError(StrCat("cannot read vocabulary ", path, ": ", error.message()));
  }
  if (size > kMaxVocabBytes) {
    return absl::InvalidArgumentError(StrCat("vocabulary ", path, " is ", size,
                                             " bytes, more than the limit of ", kMaxVocabBytes));
  }
  std::string text(static_cast<size_t>(size), '\0');
  std::ifstream in(path, std::ios::binary);
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size()))) {
    return absl::FailedPreconditionError(StrCat("cannot read vocabulary ", path));
  }
  absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> tokenizer = Create(text, options);
  if (!tokenizer.ok()) {
    return absl::Status(tokenizer.status().code(),
                        StrCat("vocabulary ", path, ": ", tokenizer.status().message()));
  }
  return tokenizer;
}

template <typename Emit>
bool WordPieceTokenizer::WordPieces(std::string_view word, Emit&& emit) const {
  size_t chars = 0;
  for (const char c : word) chars += IsUtf8Continuation(c) ? 0 : 1;
  if (chars > static_cast<size_t>(options_.max_input_chars_per_word)) {
    return emit(static_cast<int64_t>(unk_id_));
  }
  std::vector<int32_t>& pieces = ThreadScratch().pieces;
  pieces.clear();
  for (size_t start = 0; start < word.size();) {
    const Trie& trie = start == 0 ? *first_ : *continuation_;
    const auto [id, length] = trie.LongestPrefix(word.substr(start));
    if (id < 0) return emit(static_cast<int64_t>(unk_id_));
    pieces.push_back(id);
    start += length;
  }
  for (const int32_t id : pieces) {
    if (!emit(static_cast<int64_t>(id))) return false;
  }
  return true;
}

template <typename Emit>
void WordPieceTokenizer::ForEachPiece(std::string_view text, Emit&& emit) const {
  Scratch& s = ThreadScratch();
  // Splits a normalised token at punctuation and runs WordPiece on each word.
  auto finish_token = [&]() -> bool {
    if (s.token.empty()) return true;
    Normalise(options_, s);
    s.token.clear();
    s.word.clear();
    for (const char32_t c : s.normalised) {
      if (Classify(c) == CharClass::kPunct) {
        if (!s.word.empty() && !WordPieces(s.word, emit)) return false;
        s.word.clear();
        AppendUtf8(c, &s.word);
        if (!WordPieces(s.word, emit)) return false;
        s.word.clear();
      } else {
        AppendUtf8(c, &s.word);
      }
    }
    return s.word.empty() || WordPieces(s.word, emit);
  };
  s.token.clear();
  for (size_t i = 0; i < text.size();) {
    const char32_t c = DecodeUtf8(text, &i);
    switch (Classify(c)) {
      case CharClass::kDrop:
        break;
      case CharClass::kSpace:
        if (!finish_token()) return;
        break;
      case CharClass::kCjk:
        if (!finish_token()) return;
        s.token.push_back(c);
        if (!finish_token()) return;
        break;
      case CharClass::kPunct:
      case CharClass::kOther:
        s.token.push_back(c);
        break;
    }
  }
  finish_token();
}

absl::Status WordPieceTokenizer::Tokenize(std::string_view text, std::vector<int64_t>* ids) const {
  if (absl::Status status = CheckUtf8(text); !status.ok()) return status;
  ForEachPiece(text, [ids](int64_t id) {
    ids->push_back(id);
    return true;
  });
  return absl::OkStatus();
}

absl::StatusOr<int64_t> WordPieceTokenizer::Encode(std::string_view text,
                                                   std::span<int64_t> input_ids,
                                                   std::span<int64_t> attention_mask,
                                                   std::span<int64_t> token_type_ids) const {
  const size_t max_length = input_ids.size();
  if (max_length < 2 || max_length > static_cast<size_t>(kMaxEncodeLength) ||
      attention_mask.size() != max_length ||
      (!token_type_ids.empty() && token_type_ids.size() != max_length)) {
    return absl::InvalidArgumentError(
        StrCat("Encode wants outputs of one length in 2..", kMaxEncodeLength, ", got ",
               input_ids.size(), ", ", attention_mask.size(), " and ", token_type_ids.size()));
  }
  if (absl::Status status = CheckUtf8(text); !status.ok()) return status;
  size_t count = 0;
  input_ids[count++] = cls_id_;
  ForEachPiece(text, [&](int64_t id) {
    if (count + 1 >= max_length) return false;
    input_ids[count++] = id;
    return true;
  });
  input_ids[count++] = sep_id_;
  std::fill(input_ids.begin() + count, input_ids.end(), pad_id_);
  std::fill(attention_mask.begin(), attention_mask.begin() + count, 1);
  std::fill(attention_mask.begin() + count, attention_mask.end(), 0);
  std::fill(token_type_ids.begin(), token_type_ids.end(), 0);
  return static_cast<int64_t>(count);
}

}  // namespace brigade::process
