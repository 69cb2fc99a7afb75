#include "core/memory_budget.h"

#include "core/check.h"

namespace brigade {

MemoryBudget::~MemoryBudget() {
  BRIGADE_CHECK(in_use() == 0, "bytes still charged to a MemoryBudget at its end");
}

bool MemoryBudget::Add(size_t bytes) {
  size_t held = in_use_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ || held > limit_ - bytes) {
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!in_use_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  const size_t now = held + bytes;
  size_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return true;
}

void MemoryBudget::Subtract(size_t bytes) {
  const size_t before = in_use_.fetch_sub(bytes, std::memory_order_relaxed);
  BRIGADE_CHECK(before >= bytes, "MemoryBudget: more bytes returned than were charged");
}

MemoryBudget::Charge MemoryBudget::TryCharge(size_t bytes) {
  if (!Add(bytes)) return Charge();
  return Charge(this, bytes);
}

size_t MemoryBudget::TakePeak() {
  return peak_.exchange(in_use_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

bool MemoryBudget::Charge::Grow(size_t more) {
  if (budget_ != nullptr && !budget_->Add(more)) return false;
  bytes_ += more;
  return true;
}

void MemoryBudget::Charge::Release() {
  if (budget_ != nullptr && bytes_ > 0) budget_->Subtract(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

}  // namespace brigade
