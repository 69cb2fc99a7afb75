#ifndef BRIGADE_ENGINE_PROCESS_PROCESS_BACKEND_H_
#define BRIGADE_ENGINE_PROCESS_PROCESS_BACKEND_H_

// ProcessBackend (platform "brigade_process", backend "brigade_process"): src/process's pre- and
// post-processing steps served as models, so an ensemble can chain
// `JPEG bytes -> preprocess -> classifier -> top-k`, or a client can call a step alone. The
// version directory needs no model file (a text step reads its vocabulary or model from it). The
// config's `parameters` choose the step and its settings (all values are strings):
//
//   step "image_classify_preprocess": one BYTES input (an encoded JPEG or PNG per element) to
//     one FP32 or UINT8 output (the declared output's data_type), dims [C, H, W] (layout NCHW)
//     or [H, W, C] (NHWC), per image; C is 3, or 1 for order GRAY.
//       size        shorter side after the resize (torchvision Resize(size)), default 256; 0
//                   resizes straight to the crop size
//       crop        "224" or "H,W", default 224
//       mean, std   three comma-separated floats, per output channel, or one for every
//                   channel; default ImageNet's
//       layout      NCHW (default) or NHWC
//       order       RGB (default), BGR, or GRAY (one channel: PIL's convert("L") luma of the
//                   resized pixels, so a grey image keeps its values; see normalize.h)
//       mode        exact (default: PIL + torchvision's tensor bit for bit) or fast (DCT-scaled
//                   JPEG decode; see src/process/image_preprocess.h)
//       filter      bilinear (default, antialiased) or area
//       dtype       FP32 or UINT8: optional, must agree with the declared output
//       max_pixels  largest image accepted (width x height), default 40000000
//     With max_batch_size > 0 the input is dims [1] (one image per batch row); without, it is
//     one image, dims [1].
//
//   step "softmax", "top_k", "argmax": one FP32 input of scores, dims [C] per row.
//       softmax  one FP32 output, dims [C].
//       top_k    two outputs, in order: values FP32 [k] and class indices INT64 [k]; parameter
//                k (default 1, at most C), and softmax "true" to take the softmax first. With
//                parameter labels (a file in the version directory, one class name per line,
//                C lines) a third output, BYTES [k], holds the classes' names.
//     A file a step reads is named without a path (it resolves inside the version directory),
//     is a regular file (a link is followed) and at most 16 MiB.
//       argmax   one INT64 output, dims [1].
//
//   step "wordpiece_tokenize": BERT's tokenizer (src/process/wordpiece_tokenizer.h). One BYTES
//     input, dims [1] per batch row (one UTF-8 text), to 2 or 3 outputs declared in this order:
//     input_ids, attention_mask and optionally token_type_ids, each INT64 [max_length] per row
//     ([CLS] pieces [SEP] [PAD]..., truncated keeping [SEP]). With max_batch_size > 0 the batch
//     dimension comes first, as for the image step.
//       vocab          the vocab.txt: a file name in the version directory, default vocab.txt
//                      (no path; at most 16 MiB, as for top_k's labels)
//       lower_case     true (default) or false
//       strip_accents  true or false, default: as lower_case
//       max_length     tokens per row, 2..8192, default 128
//
//   step "sentencepiece_tokenize": a SentencePiece model (src/process/sentencepiece_tokenizer.h,
//     Debian's libsentencepiece). One BYTES input, dims [1] per batch row, to two outputs in
//     this order: input_ids and attention_mask, INT64 [max_length] per row ([BOS] ids [EOS],
//     truncated keeping EOS, padded with the model's pad id, or 0 when it has none).
//       model          the .model file, named as vocab above, default spm.model
//       add_bos, add_eos  true or false (default), each refused when the model lacks the piece
//       max_length     ids per row, 2..8192, default 128
//
// Thread safety: as engine::Model (a loaded step is immutable; instances hold no state).
// Failure: Load answers INVALID_ARGUMENT for an unknown step or parameter value and for
// declared tensors that do not fit the step, naming the model and the parameter or tensor.
// A text step's Load also fails for a vocabulary it cannot read or use (see the tokenizer).
// Execute answers INVALID_ARGUMENT for a bad image or a text that is not UTF-8, naming the
// model, the input and the batch index ("model 'pre': input 'IMAGE' batch index 3: JPEG:
// corrupt or truncated data: ...", "model 'tok': input 'TEXT' batch index 1: text is not
// valid UTF-8 at byte 7").
// The index is the row of the batch Execute was given: with dynamic batching that is the
// assembled batch, and the requests batched with the bad one fail too (a ModelInstance has no
// per-row failure), so configure image and text steps without dynamic_batching when one
// client's bad input must not fail another's request.

#include <memory>

#include "engine/backend.h"

namespace brigade::engine {

class ProcessBackend final : public Backend {
 public:
  std::string_view name() const override { return "brigade_process"; }
  std::string_view platform() const override { return "brigade_process"; }
  std::string_view default_model_filename() const override { return ""; }
  absl::StatusOr<std::shared_ptr<Model>> Load(const ModelLoadOptions& options) override;
};

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_PROCESS_PROCESS_BACKEND_H_
