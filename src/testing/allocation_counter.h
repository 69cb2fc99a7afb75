#ifndef BRIGADE_TESTING_ALLOCATION_COUNTER_H_
#define BRIGADE_TESTING_ALLOCATION_COUNTER_H_

// AllocationCounter: counts heap allocations made through operator new while counting is on, for
// tests that pin down how much a steady-state path allocates. A test binary gets it by linking
// brigade_testing_allocation_counter, which replaces the global allocation functions with
// malloc/free-backed ones that count (C allocations that bypass operator new are not seen).
//
// Thread safety: all functions are safe from any thread; counting is process-wide, except on
// threads that called ExcludeThisThread() (a test's client thread, whose own allocations are not
// the server's). Failure: none; an allocation that fails throws std::bad_alloc as usual.

#include <cstdint>

namespace brigade::testing {

class AllocationCounter {
 public:
  // Zeroes the count and starts counting.
  static void Start();
  // Stops counting and returns the allocations counted since Start().
  static int64_t Stop();
  // Allocations on the calling thread are never counted from now on.
  static void ExcludeThisThread();
};

}  // namespace brigade::testing

#endif  // BRIGADE_TESTING_ALLOCATION_COUNTER_H_
