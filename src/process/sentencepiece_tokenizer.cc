#include "process/sentencepiece_tokenizer.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "process/sentencepiece_binding.h"
#include "process/utf8.h"

namespace brigade::process {
namespace {

// The SentencePiece module's load function, opened on first use (see sentencepiece_binding.h).
struct Module {
  internal::LoadSentencePieceFunction load = nullptr;
  std::string error;
};

const Module& OpenModule() {
  static const Module module = [] {
    Module m;
    const char* env = std::getenv("BRIGADE_SENTENCEPIECE_MODULE");
    const std::string path = env != nullptr && *env != '\0' ? env : BRIGADE_SENTENCEPIECE_MODULE;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle == nullptr) {
      const char* error = dlerror();
      m.error = StrCat("cannot open the SentencePiece module ", path, ": ",
                       error != nullptr ? error : "unknown error");
      return m;
    }
    m.load = reinterpret_cast<internal::LoadSentencePieceFunction>(
        dlsym(handle, internal::kLoadSentencePieceSymbol));
    if (m.load == nullptr) {
      m.error =
          StrCat("the SentencePiece module ", path, " has no ", internal::kLoadSentencePieceSymbol);
    }
    return m;
  }();
  return module;
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(const SentencePieceOptions& options,
                                               std::unique_ptr<internal::SentencePieceModel> model)
    : options_(options), model_(std::move(model)) {
  pad_id_ = model_->pad_id() >= 0 ? model_->pad_id() : 0;
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Create(
    std::string_view model, const SentencePieceOptions& options) {
  if (model.size() > kMaxSentencePieceModelBytes) {
    return absl::InvalidArgumentError(StrCat("SentencePiece model is ", model.size(),
                                             " bytes, more than the limit of ",
                                             kMaxSentencePieceModelBytes));
  }
  const Module& module = OpenModule();
  if (module.load == nullptr) return absl::FailedPreconditionError(module.error);
  std::string error;
  std::unique_ptr<internal::SentencePieceModel> binding(
      module.load(model.data(), model.size(), &error));
  if (binding == nullptr) {
    return absl::InvalidArgumentError(StrCat("cannot load the SentencePiece model: ", error));
  }
  if (options.add_bos && binding->bos_id() < 0) {
    return absl::InvalidArgumentError("add_bos: the SentencePiece model has no BOS piece");
  }
  if (options.add_eos && binding->eos_id() < 0) {
    return absl::InvalidArgumentError("add_eos: the SentencePiece model has no EOS piece");
  }
  return std::unique_ptr<SentencePieceTokenizer>(
      new SentencePieceTokenizer(options, std::move(binding)));
}

int64_t SentencePieceTokenizer::vocab_size() const { return model_->pieces(); }

absl::Status SentencePieceTokenizer::Tokenize(std::string_view text,
                                              std::vector<int64_t>* ids) const {
  if (const size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("text is not valid UTF-8 at byte ", bad));
  }
  thread_local std::vector<int> pieces;
  std::string error;
  if (!model_->Encode(text, &pieces, &error)) {
    return absl::InvalidArgumentError(StrCat("SentencePiece: ", error));
  }
  ids->insert(ids->end(), pieces.begin(), pieces.end());
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SentencePieceTokenizer::Encode(std::string_view text,
                                                       std::span<int64_t> input_ids,
                                                       std::span<int64_t> attention_mask) const {
  const size_t frame = (options_.add_bos ? 1 : 0) + (options_.add_eos ? 1 : 0);
  const size_t max_length = input_ids.size();
  if (max_length < frame + 1 || attention_mask.size() != max_length) {
    return absl::InvalidArgumentError(StrCat("Encode wants two outputs of one length of at least ",
                                             frame + 1, ", got ", input_ids.size(), " and ",
                                             attention_mask.size()));
  }
  thread_local std::vector<int64_t> ids;
  ids.clear();
  BRIGADE_RETURN_IF_ERROR(Tokenize(text, &ids));
  size_t count = 0;
  if (options_.add_bos) input_ids[count++] = model_->bos_id();
  const size_t kept = std::min(ids.size(), max_length - frame);
  std::copy(ids.begin(), ids.begin() + kept, input_ids.begin() + count);
  count += kept;
  if (options_.add_eos) input_ids[count++] = model_->eos_id();
  std::fill(input_ids.begin() + count, input_ids.end(), pad_id_);
  std::fill(attention_mask.begin(), attention_mask.begin() + count, 1);
  std::fill(attention_mask.begin() + count, attention_mask.end(), 0);
  return static_cast<int64_t>(count);
}

}  // namespace brigade::process
