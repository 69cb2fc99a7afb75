#ifndef BRIGADE_ENGINE_ONNX_EXEC_MEMORY_PLANNER_H_
#define BRIGADE_ENGINE_ONNX_EXEC_MEMORY_PLANNER_H_

// Static memory planning: given every intermediate buffer's size and the steps during which it
// is live, assign each an offset in one arena so that buffers live at the same time never
// overlap, keeping the arena small. Greedy by size: the largest buffers are placed first, each at
// the lowest offset that fits between the buffers already placed that overlap it in time.
//
//   PlanMemory({{bytes: 4096, first: 0, last: 2}, {bytes: 4096, first: 3, last: 4}})
//     → offsets {0, 0}, arena_bytes 4096   (the second buffer reuses the first's memory)
//
// Offsets are multiples of kArenaAlignment. Thread safety: a pure function.

#include <cstddef>
#include <span>
#include <vector>

namespace brigade::engine::onnx {

inline constexpr size_t kArenaAlignment = 64;

struct BufferLifetime {
  size_t bytes = 0;
  int first_step = 0;  // step that writes it first
  int last_step = 0;   // last step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per buffer, in request order
  size_t arena_bytes = 0;
};

MemoryPlan PlanMemory(std::span<const BufferLifetime> buffers);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_MEMORY_PLANNER_H_
