#ifndef BRIGADE_CACHE_CACHE_KEY_H_
#define BRIGADE_CACHE_CACHE_KEY_H_

// CacheKey: the identity of a cacheable inference request, and KeyBuilder, which computes it.
//
// What enters the key (everything that can change the answer, in a canonical encoding):
//   - the model name, the resolved version and an optional model fingerprint (the caller's
//     digest of the loaded files/config, so a model reloaded in place under the same version
//     number gets new keys);
//   - each input's name, datatype, shape and bytes (inputs in model order, as the request
//     validator leaves them);
//   - the requested outputs, in request order, with their parameters (keys sorted); an empty
//     list ("all outputs") is its own case;
//   - the request parameters the model's config lists (`key_parameters`), each as absent or its
//     typed value.
// What does not: the request id, priority, timeout, the HTTP binary_data choice and per-input
// transport parameters (binary_data_size and the like are consumed by the codecs), and request
// parameters the config does not list. Such requests share a cached answer; the response id is
// always the current request's.
//
// Collision safety. The key has three parts:
//   descriptor  the exact structural encoding (everything above except the input bytes); stored
//               with each cached entry and compared in full, byte for byte;
//   id          XXH3-128 over descriptor + input bytes: the index (memory tier) and Redis key;
//   check       a second 128-bit digest over the same bytes, XXH3-128 keyed with an independent
//               secret; stored with the entry and compared on every hit.
// A cached answer is returned only when all three match, so two requests with equal `id` but
// different structure always miss, and different input bytes would need a simultaneous
// collision of two independently keyed 128-bit digests. (Full input bytes are not stored: an
// image request would cost the cache ~100x its answer's size.)
//
// Cost: both digests run in one pass over the inputs, chunk by chunk, so large inputs are read
// from memory once (XXH3 with AVX2 when the CPU has it, via xxhash's runtime dispatch).
//
// Thread safety: KeyBuilder is immutable after construction; Build() may run on any thread.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/infer_request.h"

namespace brigade::cache {

struct Hash128 {
  uint64_t low = 0;
  uint64_t high = 0;

  // 32 lowercase hex digits, high half first.
  std::string Hex() const;

  friend bool operator==(const Hash128&, const Hash128&) = default;
  template <typename H>
  friend H AbslHashValue(H state, const Hash128& hash) {
    return H::combine(std::move(state), hash.low, hash.high);
  }
};

struct CacheKey {
  Hash128 id;
  Hash128 check;
  std::string descriptor;
  // Scope of the entry, for invalidation and Redis key names (also inside `descriptor`).
  std::string model_name;
  int64_t version = 0;

  // True when a stored entry with these parts answers this key.
  bool Matches(const Hash128& other_id, const Hash128& other_check,
               std::string_view other_descriptor) const {
    return id == other_id && check == other_check && descriptor == other_descriptor;
  }
  friend bool operator==(const CacheKey& a, const CacheKey& b) {
    return a.Matches(b.id, b.check, b.descriptor);
  }
};

class KeyBuilder {
 public:
  struct Options {
    // Request parameters that enter the key (the config's `key_parameters`); order and
    // duplicates do not matter.
    std::vector<std::string> key_parameters;
    // Test hook: when set, replaces `id` with this function of the finished key, so tests can
    // force two different requests onto one id. Never set in production.
    Hash128 (*id_override_for_testing)(const CacheKey& key) = nullptr;
  };

  explicit KeyBuilder(Options options);

  // The key of `request` (validated: inputs in model order) served by `version`.
  CacheKey Build(const InferRequest& request, int64_t version,
                 std::string_view model_fingerprint) const;

  const std::vector<std::string>& key_parameters() const { return key_parameters_; }

 private:
  std::vector<std::string> key_parameters_;  // sorted, unique
  Hash128 (*id_override_)(const CacheKey&) = nullptr;
};

}  // namespace brigade::cache

#endif  // BRIGADE_CACHE_CACHE_KEY_H_
