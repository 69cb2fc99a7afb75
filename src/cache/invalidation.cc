#include "cache/invalidation.h"

#include "cache/byte_io.h"
#include "core/strings.h"

namespace brigade::cache {
namespace {

constexpr std::string_view kInvalidationMagic = "BRI1";

}  // namespace

std::string InvalidationScope::ToString() const {
  switch (kind) {
    case Kind::kAll:
      return "all";
    case Kind::kModel:
      return StrCat("model '", model, "'");
    case Kind::kModelVersion:
      return StrCat("model '", model, "' version ", version);
  }
  return "unknown";
}

std::string EncodeInvalidation(const InvalidationMessage& message) {
  std::string out;
  ByteWriter writer(&out);
  writer.Raw(kInvalidationMagic);
  writer.U64(message.origin);
  writer.U8(static_cast<uint8_t>(message.scope.kind));
  writer.I64(message.scope.kind == InvalidationScope::Kind::kModelVersion ? message.scope.version
                                                                          : 0);
  writer.Str(message.scope.kind == InvalidationScope::Kind::kAll ? std::string_view()
                                                                 : message.scope.model);
  return out;
}

absl::StatusOr<InvalidationMessage> DecodeInvalidation(std::string_view bytes) {
  ByteReader reader(bytes);
  std::string_view magic;
  InvalidationMessage message;
  uint8_t kind = 0;
  std::string_view model;
  if (!reader.Raw(kInvalidationMagic.size(), &magic) || magic != kInvalidationMagic ||
      !reader.U64(&message.origin) || !reader.U8(&kind) || !reader.I64(&message.scope.version) ||
      !reader.Str(&model) || reader.remaining() != 0) {
    return absl::InvalidArgumentError("invalidation message is malformed");
  }
  if (kind > static_cast<uint8_t>(InvalidationScope::Kind::kModelVersion)) {
    return absl::InvalidArgumentError(StrCat("invalidation message has unknown kind ", kind));
  }
  message.scope.kind = static_cast<InvalidationScope::Kind>(kind);
  if (message.scope.kind != InvalidationScope::Kind::kAll && model.empty()) {
    return absl::InvalidArgumentError("invalidation message names no model");
  }
  message.scope.model = std::string(model);
  return message;
}

}  // namespace brigade::cache
