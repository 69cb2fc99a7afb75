#include "telemetry/fast_random.h"

#include <sys/random.h>

#include <array>
#include <chrono>
#include <thread>

namespace brigade::telemetry {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

struct Xoshiro256 {
  Xoshiro256() {
    uint64_t seed = 0;
    if (::getrandom(&seed, sizeof(seed), 0) != static_cast<ssize_t>(sizeof(seed))) {
      // No entropy source: fall back to time and thread identity (still distinct per thread).
      seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
             std::hash<std::thread::id>{}(std::this_thread::get_id());
    }
    for (uint64_t& word : s) word = SplitMix64(seed);
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = Rotl(s[3], 45);
    return result;
  }
  std::array<uint64_t, 4> s;
};

}  // namespace

uint64_t ThreadRandom64() {
  thread_local Xoshiro256 generator;
  return generator.Next();
}

bool ThreadRandomChance(double rate) {
  if (rate <= 0) return false;
  if (rate >= 1) return true;
  // 53 random bits as a double in [0, 1).
  return static_cast<double>(ThreadRandom64() >> 11) * 0x1.0p-53 < rate;
}

}  // namespace brigade::telemetry
