#ifndef BRIGADE_CACHE_INVALIDATION_H_
#define BRIGADE_CACHE_INVALIDATION_H_

// InvalidationScope: which cached answers to drop — all, one model's, or one model version's —
// and the message that carries a scope to every Brigade process over Redis pub/sub.
//
// Message format (binary, little-endian; see byte_io.h):
//   "BRI1" u64 origin u8 kind(0 all, 1 model, 2 model+version) i64 version str model
// `origin` identifies the sending process so it can skip its own broadcast. Decoding rejects
// anything else (wrong magic, unknown kind, trailing bytes), so a stray publisher on the channel
// cannot make a process drop entries by accident with a malformed message.
//
// Pure values and functions; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace brigade::cache {

struct InvalidationScope {
  enum class Kind : uint8_t { kAll = 0, kModel = 1, kModelVersion = 2 };
  Kind kind = Kind::kAll;
  std::string model;
  int64_t version = 0;

  static InvalidationScope All() { return {}; }
  static InvalidationScope Model(std::string_view model_name) {
    return {Kind::kModel, std::string(model_name), 0};
  }
  static InvalidationScope ModelVersion(std::string_view model_name, int64_t model_version) {
    return {Kind::kModelVersion, std::string(model_name), model_version};
  }

  bool CoversModel(std::string_view model_name) const {
    return kind == Kind::kAll || model == model_name;
  }
  bool Covers(std::string_view model_name, int64_t model_version) const {
    return CoversModel(model_name) && (kind != Kind::kModelVersion || version == model_version);
  }
  // "all", "model 'm'", "model 'm' version 3", for messages and logs.
  std::string ToString() const;

  friend bool operator==(const InvalidationScope&, const InvalidationScope&) = default;
};

struct InvalidationMessage {
  InvalidationScope scope;
  uint64_t origin = 0;
};

std::string EncodeInvalidation(const InvalidationMessage& message);
// INVALID_ARGUMENT when `bytes` is not a well-formed message.
absl::StatusOr<InvalidationMessage> DecodeInvalidation(std::string_view bytes);

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_INVALIDATION_H_
