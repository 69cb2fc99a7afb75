// libFuzzer target: the cached value decoder and the invalidation message decoder must reject or
// accept any bytes without crashing, reading out of bounds or allocating without bound (Redis
// is shared, so its values are untrusted input). Random bytes almost never pass the checksum, so
// each input is also tried re-sealed with a valid checksum, which sends it through every
// structural check behind it. Build: see CMakeLists.txt (BRIGADE_FUZZ).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cache/byte_io.h"
#include "cache/cached_value.h"
#include "cache/invalidation.h"
#include "xxhash.h"

namespace {

void Touch(const brigade::cache::CachedEntry& entry) {
  volatile size_t sink = entry.descriptor.size() + entry.model_version.size();
  for (const brigade::InferOutput& output : entry.outputs) {
    const std::span<const std::byte> bytes = output.tensor.bytes();
    if (!bytes.empty())
      sink = sink + static_cast<size_t>(bytes.front()) + static_cast<size_t>(bytes.back());
    if (output.tensor.dtype() == brigade::DataType::kBytes) {
      auto strings = output.tensor.StringValues();
      if (strings.ok()) sink = sink + strings->size();
    }
  }
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  if (auto entry = brigade::cache::DecodeCachedValue(std::make_shared<const std::string>(input));
      entry.ok()) {
    Touch(**entry);
  }
  std::string sealed = input;
  brigade::cache::ByteWriter(&sealed).U64(XXH3_64bits(input.data(), input.size()));
  if (auto entry = brigade::cache::DecodeCachedValue(std::make_shared<const std::string>(sealed));
      entry.ok()) {
    Touch(**entry);
  }
  (void)brigade::cache::DecodeInvalidation(input);
  return 0;
}
