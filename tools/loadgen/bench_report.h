#ifndef BRIGADE_TOOLS_LOADGEN_BENCH_REPORT_H_
#define BRIGADE_TOOLS_LOADGEN_BENCH_REPORT_H_

// Formatting a benchmark's results: a human table, CSV (one row per level, for spreadsheets and
// scripts) and JSON (everything, for `brigade analyze` and CI). Times are in microseconds.
//
// Derived figures, per level:
//   compute   = server compute_input + compute_infer + compute_output (means per request);
//   overhead  = client end-to-end latency − compute, at the mean, p50 and p99 (the statistics
//               extension only has means, so p50/p99 overhead subtract the mean compute);
//   client max req/s per core = 1e6 / client CPU µs per request;
//   cache hit rate = cache hits / (hits + misses) in the window, when the model has a cache.
// Server columns are empty when the server's statistics were unavailable (the JSON says why).
//
// Pure functions; thread-safe.

#include <string>

#include "tools/loadgen/bench_runner.h"

namespace brigade::loadgen {

std::string FormatTable(const BenchReport& report);
std::string FormatCsv(const BenchReport& report);
std::string FormatJson(const BenchReport& report);

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_BENCH_REPORT_H_
