#ifndef BRIGADE_ENGINE_TORCH_HEAP_RETENTION_H_
#define BRIGADE_ENGINE_TORCH_HEAP_RETENTION_H_

// Keeps glibc's malloc from handing libtorch's freed tensor memory back to the kernel after
// every forward().
//
// libtorch allocates each intermediate tensor with posix_memalign and frees it when forward()
// returns. With glibc's defaults a block above the mmap threshold (128 KiB at start, then raised
// to the largest mmapped block freed so far) gets its own mmap, and an instance thread's arena
// shrinks its heap (MADV_DONTNEED) whenever more than the trim threshold is free at its top. Either
// way the next forward() touches fresh pages: the Fashion-MNIST demo model at 32 rows, run on a
// non-main thread as instances are, took 564k page faults per 2000 runs instead of 22k and ran
// 4.8x slower under load (1.6x on an idle core). Because the thresholds move with the sizes freed
// so far, the speed also depended on the order of the first batch sizes: the "bistable" throughput
// seen in the scheduler benchmark.
//
// RetainFreedHeapOnce() fixes both thresholds (which also stops glibc's adjustments): blocks up
// to 32 MiB (glibc's maximum) come from the arenas, and an arena keeps up to 64 MiB free at its
// top (glibc's own ratio of 2x the mmap threshold). Memory the process once used stays mapped,
// as it does with jemalloc or tcmalloc. The environment wins: when MALLOC_MMAP_THRESHOLD_,
// MALLOC_TRIM_THRESHOLD_ or a glibc.malloc tunable in GLIBC_TUNABLES is set, nothing is changed.
//
// Process-wide. Thread-safe (the first call does the work, later calls return its result).

#include <string>

namespace brigade::engine {

inline constexpr int kRetainedMmapThresholdBytes = 32 << 20;
inline constexpr int kRetainedTrimThresholdBytes = 64 << 20;

// What was found and done, for logs: e.g. "malloc: blocks up to 32 MiB reused, ...".
const std::string& RetainFreedHeapOnce();

}  // namespace brigade::engine

#endif  // BRIGADE_ENGINE_TORCH_HEAP_RETENTION_H_
