#ifndef BRIGADE_CORE_MEMORY_BUDGET_H_
#define BRIGADE_CORE_MEMORY_BUDGET_H_

// MemoryBudget: a process-wide cap on the bytes that requests in flight hold (HTTP bodies, gRPC
// request messages), shared by every connection of both protocols.
//
// Why: each transport bounds one request (`--http-max-input-size`, gRPC's message limit) and the
// number of connections, but not their product: 4,096 connections each sending a 64 MiB body ask
// for 256 GiB, and the kernel's OOM killer answers for every model at once. A charge taken before
// the bytes are allocated turns that into a 503 / UNAVAILABLE for the requests past the cap while
// the ones already admitted finish.
//
// Thread safety: every member is safe from any thread (lock-free). Ownership: a Charge returns its
// bytes when destroyed and must not outlive its budget; the budget is created at start-up and
// outlives the transports. Failure: TryCharge refuses (returns an empty Charge) instead of
// exceeding the limit; nothing here allocates.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace brigade {

class MemoryBudget {
 public:
  // Bytes held against a budget; empty (holds nothing) when default-constructed or refused.
  class Charge {
   public:
    Charge() = default;
    Charge(Charge&& other) noexcept
        : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
    Charge& operator=(Charge&& other) noexcept {
      if (this != &other) {
        Release();
        budget_ = std::exchange(other.budget_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
      }
      return *this;
    }
    Charge(const Charge&) = delete;
    Charge& operator=(const Charge&) = delete;
    ~Charge() { Release(); }

    // Whether the budget granted it (a zero-byte charge from a budget is granted).
    explicit operator bool() const { return budget_ != nullptr; }
    size_t bytes() const { return bytes_; }
    // The budget it is charged to; null when it holds nothing from one.
    MemoryBudget* budget() const { return budget_; }

    // Adds `more` bytes to a granted charge; false (and nothing added) when the budget would be
    // exceeded. A charge that holds nothing from no budget grows without limit: callers without a
    // budget need no second path.
    bool Grow(size_t more);

    // Returns the bytes now rather than at destruction.
    void Release();

   private:
    friend class MemoryBudget;
    Charge(MemoryBudget* budget, size_t bytes) : budget_(budget), bytes_(bytes) {}

    MemoryBudget* budget_ = nullptr;
    size_t bytes_ = 0;
  };

  // `limit_bytes` in all; 0 is a valid (refuse-everything-but-empty) limit, so callers that want
  // no limit pass no budget at all.
  explicit MemoryBudget(size_t limit_bytes) : limit_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;
  // Every charge must have been returned: one still out would write into freed memory later.
  ~MemoryBudget();

  // `bytes` more, or an empty Charge (and one more refusal counted) when in_use() + bytes would
  // exceed the limit.
  Charge TryCharge(size_t bytes);

  size_t limit() const { return limit_; }
  size_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  // The most held at once since the previous call (then restarts from what is held now), for a
  // sampled gauge that must not miss a burst between two samples.
  size_t TakePeak();
  // Charges refused so far.
  uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  bool Add(size_t bytes);
  void Subtract(size_t bytes);

  const size_t limit_;
  std::atomic<size_t> in_use_{0};
  std::atomic<size_t> peak_{0};
  std::atomic<uint64_t> refusals_{0};
};

}  // namespace brigade

#endif  // BRIGADE_CORE_MEMORY_BUDGET_H_
