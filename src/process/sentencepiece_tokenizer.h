#ifndef BRIGADE_PROCESS_SENTENCEPIECE_TOKENIZER_H_
#define BRIGADE_PROCESS_SENTENCEPIECE_TOKENIZER_H_

// SentencePieceTokenizer: one UTF-8 text to a SentencePiece model's input ids, through Debian's
// libsentencepiece, which runs in a module of its own (sentencepiece_binding.h says why): the
// model's own normaliser and its unigram or BPE segmentation, as `spm_encode` encodes.
//
//   encode   the model's ids for the text (no sampling)
//   frame    optionally the model's BOS id first and its EOS id last; the text's ids are
//            truncated to max_length minus those, so EOS stays
//   pad      up to max_length with the model's pad id, or 0 when the model has none (a model
//            trained without --pad_id); attention_mask is 1 for every id but padding
//
// Thread safety: immutable after Create; Encode may be called from any number of threads at
// once. Ownership: Create returns the only owner; nothing refers to the model bytes afterwards.
// Failure: Create answers INVALID_ARGUMENT for bytes over kMaxSentencePieceModelBytes or that
// libsentencepiece cannot load (with its message), and for add_bos/add_eos when the model has
// no such piece; FAILED_PRECONDITION when the SentencePiece module cannot be opened (see
// sentencepiece_binding.h: not under sanitizers). Encode answers INVALID_ARGUMENT for text that is
// not UTF-8, naming the byte offset (the caller names which text), and for outputs of the wrong
// length; nothing is written to the outputs then.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace brigade::process {

namespace internal {
class SentencePieceModel;
}  // namespace internal

// SentencePiece models are a few hundred KB to a few MB (T5's 32k pieces: 792 KB).
inline constexpr size_t kMaxSentencePieceModelBytes = size_t{64} << 20;

struct SentencePieceOptions {
  bool add_bos = false;
  bool add_eos = false;
};

class SentencePieceTokenizer {
 public:
  // `model` is the bytes of a .model file (a serialized ModelProto).
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> Create(
      std::string_view model, const SentencePieceOptions& options);
  ~SentencePieceTokenizer();
  SentencePieceTokenizer(const SentencePieceTokenizer&) = delete;
  SentencePieceTokenizer& operator=(const SentencePieceTokenizer&) = delete;

  int64_t vocab_size() const;
  // The id padding uses.
  int64_t pad_id() const { return pad_id_; }

  // Appends the text's ids (no BOS/EOS, no truncation).
  absl::Status Tokenize(std::string_view text, std::vector<int64_t>* ids) const;

  // input_ids and attention_mask of max_length elements each (at least 1 + add_bos + add_eos);
  // returns the number of ids before padding.
  absl::StatusOr<int64_t> Encode(std::string_view text, std::span<int64_t> input_ids,
                                 std::span<int64_t> attention_mask) const;

 private:
  SentencePieceTokenizer(const SentencePieceOptions& options,
                         std::unique_ptr<internal::SentencePieceModel> model);

  const SentencePieceOptions options_;
  const std::unique_ptr<internal::SentencePieceModel> model_;
  int64_t pad_id_ = 0;
};

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_SENTENCEPIECE_TOKENIZER_H_
