#ifndef BRIGADE_PROCESS_SENTENCEPIECE_BINDING_H_
#define BRIGADE_PROCESS_SENTENCEPIECE_BINDING_H_

// SentencePieceModel: libsentencepiece behind an interface of standard types, implemented in a
// module of its own (sentencepiece_module.cc, built as libbrigade_sentencepiece.so) that
// SentencePieceTokenizer opens with dlopen(RTLD_LOCAL | RTLD_DEEPBIND), once, from the path in
// the environment variable BRIGADE_SENTENCEPIECE_MODULE or else the one the build wrote. Why:
//
//   - Debian's libsentencepiece carries its own copy of protobuf-lite 3.14 and exports it. In a
//     process that also links Debian's libprotobuf 3.21 (the server does, for gRPC and ONNX),
//     the two interpose each other's symbols and the program crashes while libprotobuf
//     registers its descriptors, before main. Opened locally with deep binding, the module and
//     libsentencepiece resolve their symbols among themselves first and the server never
//     sees them.
//   - Its header declares its own absl::string_view (an alias of std::string_view), which
//     collides with Debian's abseil, where absl::string_view is a class; so only the module,
//     which includes no abseil, includes it.
//
// Sanitizer runtimes refuse RTLD_DEEPBIND, so under ASan/TSan the module does not load (the
// SentencePiece tests are not in the sanitizer suites).
//
// Thread safety: a loaded model is immutable; Encode may be called from any number of threads
// at once (SentencePieceProcessor's encoding is const). The module is never closed.
// Failure: the load function returns null and Encode false, each with libsentencepiece's
// message in `*error`.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace brigade::process::internal {

class SentencePieceModel {
 public:
  virtual ~SentencePieceModel() = default;
  virtual bool Encode(std::string_view text, std::vector<int>* ids, std::string* error) const = 0;
  // The model's ids; -1 when it has no such piece.
  virtual int pieces() const = 0;
  virtual int bos_id() const = 0;
  virtual int eos_id() const = 0;
  virtual int pad_id() const = 0;
};

// The module's one export: a new model from the bytes of a .model file, or null with `*error`.
using LoadSentencePieceFunction = SentencePieceModel* (*)(const char* model, size_t size,
                                                          std::string* error);
inline constexpr char kLoadSentencePieceSymbol[] = "brigade_load_sentencepiece";

}  // namespace brigade::process::internal

#endif  // BRIGADE_PROCESS_SENTENCEPIECE_BINDING_H_
