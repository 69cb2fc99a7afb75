#include "telemetry/counter.h"

namespace brigade::telemetry {

Counter::Counter() : cells_(std::make_unique<Cell[]>(static_cast<size_t>(MetricShardCount()))) {}

uint64_t Counter::Value() const {
  uint64_t total = 0;
  for (int i = 0; i < MetricShardCount(); ++i) {
    total += cells_[i].value.load(std::memory_order_relaxed);
  }
  return total;
}

}  // namespace brigade::telemetry
