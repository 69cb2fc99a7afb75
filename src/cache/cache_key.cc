#include "cache/cache_key.h"

#include <algorithm>
#include <array>
#include <memory>

#include "cache/byte_io.h"
#include "fmt/format.h"
// XXH3_generateSecret is in xxhash's "experimental" section; the header and library come from the
// same Debian package, so the version cannot drift.
#define XXH_STATIC_LINKING_ONLY
#include "xxh_x86dispatch.h"  // XXH3_128bits_update → the AVX2 variant when the CPU has it
#include "xxhash.h"

namespace brigade::cache {
namespace {

// Bumped whenever the descriptor encoding changes, so old and new builds never share keys.
constexpr std::string_view kDescriptorMagic = "BRK1";
// Both digests consume the input bytes this many at a time, so a chunk is still in L2 when the
// second digest reads it.
constexpr size_t kChunkBytes = size_t{64} * 1024;

// The `check` digest's secret, derived once from a fixed seed distinct from XXH3's default.
const std::array<unsigned char, XXH3_SECRET_DEFAULT_SIZE>& CheckSecret() {
  static const std::array<unsigned char, XXH3_SECRET_DEFAULT_SIZE> secret = [] {
    std::array<unsigned char, XXH3_SECRET_DEFAULT_SIZE> s{};
    constexpr std::string_view kSeed = "brigade response cache: independent check digest v1";
    XXH3_generateSecret(s.data(), s.size(), kSeed.data(), kSeed.size());
    return s;
  }();
  return secret;
}

struct StateDeleter {
  void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
};
using StatePtr = std::unique_ptr<XXH3_state_t, StateDeleter>;

// Per-thread streaming states (opaque, allocated once per thread by xxhash).
XXH3_state_t* ThreadState(int which) {
  thread_local StatePtr states[2] = {StatePtr(XXH3_createState()), StatePtr(XXH3_createState())};
  return states[which].get();
}

Hash128 ToHash(XXH128_hash_t hash) { return {hash.low64, hash.high64}; }

void WriteSortedParams(const Parameters& parameters, ByteWriter* writer) {
  std::vector<const Parameters::Entry*> sorted;
  sorted.reserve(parameters.size());
  for (const Parameters::Entry& entry : parameters.entries()) sorted.push_back(&entry);
  std::sort(
      sorted.begin(), sorted.end(),
      [](const Parameters::Entry* a, const Parameters::Entry* b) { return a->first < b->first; });
  writer->U32(static_cast<uint32_t>(sorted.size()));
  for (const Parameters::Entry* entry : sorted) {
    writer->Str(entry->first);
    writer->Value(entry->second);
  }
}

}  // namespace

std::string Hash128::Hex() const { return fmt::format("{:016x}{:016x}", high, low); }

KeyBuilder::KeyBuilder(Options options)
    : key_parameters_(std::move(options.key_parameters)),
      id_override_(options.id_override_for_testing) {
  std::sort(key_parameters_.begin(), key_parameters_.end());
  key_parameters_.erase(std::unique(key_parameters_.begin(), key_parameters_.end()),
                        key_parameters_.end());
  CheckSecret();  // derive the secret before the first request rather than during it
}

CacheKey KeyBuilder::Build(const InferRequest& request, int64_t version,
                           std::string_view model_fingerprint) const {
  CacheKey key;
  key.model_name = request.model_name;
  key.version = version;

  ByteWriter writer(&key.descriptor);
  writer.Raw(kDescriptorMagic);
  writer.Str(request.model_name);
  writer.I64(version);
  writer.Str(model_fingerprint);
  writer.U32(static_cast<uint32_t>(request.inputs.size()));
  for (const InferInput& input : request.inputs) {
    writer.Str(input.name);
    writer.U8(static_cast<uint8_t>(input.tensor.dtype()));
    writer.U32(static_cast<uint32_t>(input.tensor.shape().size()));
    for (int64_t dim : input.tensor.shape()) writer.I64(dim);
    writer.U64(input.tensor.byte_size());
  }
  writer.U8(request.outputs.empty() ? 1 : 0);
  writer.U32(static_cast<uint32_t>(request.outputs.size()));
  for (const RequestedOutput& output : request.outputs) {
    writer.Str(output.name);
    WriteSortedParams(output.parameters, &writer);
  }
  writer.U32(static_cast<uint32_t>(key_parameters_.size()));
  for (const std::string& name : key_parameters_) {
    writer.Str(name);
    const ParameterValue* value = request.parameters.Find(name);
    writer.U8(value != nullptr ? 1 : 0);
    if (value != nullptr) writer.Value(*value);
  }

  XXH3_state_t* id_state = ThreadState(0);
  XXH3_state_t* check_state = ThreadState(1);
  XXH3_128bits_reset(id_state);
  XXH3_128bits_reset_withSecret(check_state, CheckSecret().data(), CheckSecret().size());
  XXH3_128bits_update(id_state, key.descriptor.data(), key.descriptor.size());
  XXH3_128bits_update(check_state, key.descriptor.data(), key.descriptor.size());
  for (const InferInput& input : request.inputs) {
    std::span<const std::byte> bytes = input.tensor.bytes();
    for (size_t offset = 0; offset < bytes.size(); offset += kChunkBytes) {
      const size_t size = std::min(kChunkBytes, bytes.size() - offset);
      XXH3_128bits_update(id_state, bytes.data() + offset, size);
      XXH3_128bits_update(check_state, bytes.data() + offset, size);
    }
  }
  key.id = ToHash(XXH3_128bits_digest(id_state));
  key.check = ToHash(XXH3_128bits_digest(check_state));
  if (id_override_ != nullptr) key.id = id_override_(key);
  return key;
}

}  // namespace brigade::cache
