// The SentencePiece module (libbrigade_sentencepiece.so): libsentencepiece behind
// SentencePieceModel. See sentencepiece_binding.h for why it is a module of its own.

#include <sentencepiece_processor.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "process/sentencepiece_binding.h"

namespace brigade::process::internal {
namespace {

class Model final : public SentencePieceModel {
 public:
  bool Load(std::string_view model, std::string* error) {
    const sentencepiece::util::Status status = processor_.LoadFromSerializedProto(model);
    if (!status.ok()) *error = status.ToString();
    return status.ok();
  }

  bool Encode(std::string_view text, std::vector<int>* ids, std::string* error) const override {
    const sentencepiece::util::Status status = processor_.Encode(text, ids);
    if (!status.ok()) *error = status.ToString();
    return status.ok();
  }
  int pieces() const override { return processor_.GetPieceSize(); }
  int bos_id() const override { return processor_.bos_id(); }
  int eos_id() const override { return processor_.eos_id(); }
  int pad_id() const override { return processor_.pad_id(); }

 private:
  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace
}  // namespace brigade::process::internal

extern "C" __attribute__((visibility("default"))) brigade::process::internal::SentencePieceModel*
brigade_load_sentencepiece(const char* model, size_t size, std::string* error) {
  auto loaded = std::make_unique<brigade::process::internal::Model>();
  if (!loaded->Load(std::string_view(model, size), error)) return nullptr;
  return loaded.release();
}
