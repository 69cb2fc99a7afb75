#ifndef BRIGADE_TELEMETRY_FAST_RANDOM_H_
#define BRIGADE_TELEMETRY_FAST_RANDOM_H_

// Per-thread pseudo-random numbers for sampling decisions and trace/span ids: xoshiro256** with a
// per-thread state seeded once from getrandom(), so drawing is a few ns, lock-free, and threads
// never share a sequence. Not for cryptography (W3C asks ids to be random, not secret).
//
// Thread safety: each thread uses its own state; safe from any thread.

#include <cstdint>

namespace brigade::telemetry {

uint64_t ThreadRandom64();

// True with probability `rate` (<= 0: never; >= 1: always).
bool ThreadRandomChance(double rate);

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_FAST_RANDOM_H_
