#ifndef BRIGADE_CORE_CLOCK_H_
#define BRIGADE_CORE_CLOCK_H_

// Monotonic time, injectable. Everything that measures or waits on time (stage stamps, queue
// delays, deadlines, TTLs, sampling windows) takes a `const Clock*` so tests can step a
// FakeClock instead of sleeping.
//
// Thread safety: both implementations are safe to call from any thread.

#include <atomic>
#include <cstdint>

namespace brigade {

class Clock {
 public:
  virtual ~Clock() = default;

  // Nanoseconds on a monotonic clock with an arbitrary epoch (CLOCK_MONOTONIC for RealClock).
  virtual int64_t NowNs() const = 0;

  // The process-wide real monotonic clock. Never null; lives forever.
  static const Clock* Real();
};

// Time that moves only when a test says so.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ns = 1'000'000'000) : now_ns_(start_ns) {}

  int64_t NowNs() const override { return now_ns_.load(std::memory_order_acquire); }
  void AdvanceNs(int64_t delta_ns) { now_ns_.fetch_add(delta_ns, std::memory_order_acq_rel); }
  void AdvanceUs(int64_t delta_us) { AdvanceNs(delta_us * 1000); }
  void SetNs(int64_t now_ns) { now_ns_.store(now_ns, std::memory_order_release); }

 private:
  std::atomic<int64_t> now_ns_;
};

// Nanoseconds since the Unix epoch from the wall clock, for protocol fields that are calendar
// times (statistics' last_inference, trace span times). Never used to measure durations.
int64_t WallNowNs();

}  // namespace brigade

#endif  // BRIGADE_CORE_CLOCK_H_
