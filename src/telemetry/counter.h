#ifndef BRIGADE_TELEMETRY_COUNTER_H_
#define BRIGADE_TELEMETRY_COUNTER_H_

// Counter and Gauge: the two scalar metric cells.
//
//   Counter  a monotonically increasing uint64 (requests, errors, bytes). Sharded per thread (see
//            metric_shard.h): Add() is one relaxed fetch_add on a cache line few other threads
//            touch; Value() sums the shards.
//   Gauge    an int64 that goes up and down or is set (queue length, in-flight requests). One
//            atomic: gauges are written where the value changes, far less often than requests
//            are counted, and Set() needs a single home.
//
// Thread safety: every method is safe from any thread at any time; all orderings are relaxed, so
// a reader sees each cell's recent value, not a transaction across cells.
// Ownership: cells are created and owned by their family in MetricsRegistry and live as long as
// the registry; callers keep raw pointers to them (metric handles).

#include <atomic>
#include <cstdint>
#include <memory>

#include "telemetry/metric_shard.h"

namespace brigade::telemetry {

class Counter {
 public:
  Counter();
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  void Add(uint64_t n = 1) {
    cells_[ThisThreadMetricShard()].value.fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Value() const;

 private:
  struct alignas(64) Cell {
    std::atomic<uint64_t> value{0};
  };
  std::unique_ptr<Cell[]> cells_;  // MetricShardCount() of them
};

class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(int64_t value) { value_.store(value, std::memory_order_relaxed); }
  void Add(int64_t delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  void Increment() { Add(1); }
  void Decrement() { Add(-1); }
  int64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_COUNTER_H_
