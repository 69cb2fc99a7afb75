#include "testing/allocation_counter.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

// This file replaces the global allocation functions with malloc/free-backed ones; GCC cannot see
// that the replaced operator delete matches them.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};
thread_local bool excluded = false;

void* Allocate(size_t size, size_t alignment) {
  if (counting.load(std::memory_order_relaxed) && !excluded) {
    allocations.fetch_add(1, std::memory_order_relaxed);
  }
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(size == 0 ? 1 : size);
  } else if (posix_memalign(&p, alignment, size == 0 ? alignment : size) != 0) {
    p = nullptr;
  }
  return p;
}
}  // namespace

namespace brigade::testing {

void AllocationCounter::Start() {
  allocations = 0;
  counting = true;
}

int64_t AllocationCounter::Stop() {
  counting = false;
  return allocations.load();
}

void AllocationCounter::ExcludeThisThread() { excluded = true; }

}  // namespace brigade::testing

void* operator new(size_t size) {
  void* p = Allocate(size, alignof(std::max_align_t));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, std::align_val_t a) {
  void* p = Allocate(size, static_cast<size_t>(a));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size, std::align_val_t a) { return operator new(size, a); }
void* operator new(size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return Allocate(size, static_cast<size_t>(a));
}
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return Allocate(size, alignof(std::max_align_t));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
