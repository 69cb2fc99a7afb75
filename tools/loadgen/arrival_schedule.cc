#include "tools/loadgen/arrival_schedule.h"

#include <cmath>

namespace brigade::loadgen {

ArrivalSchedule::ArrivalSchedule(ArrivalKind kind, double rate_per_s, uint64_t seed)
    : kind_(kind), mean_gap_ns_(1e9 / rate_per_s), random_(seed) {}

ArrivalSchedule::Slot ArrivalSchedule::Next() {
  absl::MutexLock lock(&mu_);
  Slot slot;
  slot.index = next_index_++;
  if (kind_ == ArrivalKind::kConstant) {
    // From the index, not by accumulation, so rounding never drifts over a long run.
    slot.offset_ns = std::llround(static_cast<double>(slot.index) * mean_gap_ns_);
    return slot;
  }
  slot.offset_ns = std::llround(next_offset_ns_);
  // Inverse-CDF sampling of Exp(rate): u in [0, 1) so 1 - u in (0, 1] and the log is finite.
  double u = std::generate_canonical<double, 53>(random_);
  if (u >= 1.0) u = std::nextafter(1.0, 0.0);  // some libstdc++ versions can return 1
  next_offset_ns_ += -std::log1p(-u) * mean_gap_ns_;
  return slot;
}

}  // namespace brigade::loadgen
