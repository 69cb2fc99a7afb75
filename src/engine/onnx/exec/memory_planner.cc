#include "engine/onnx/exec/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace brigade::engine::onnx {
namespace {

size_t AlignUp(size_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

bool Overlap(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

}  // namespace

MemoryPlan PlanMemory(std::span<const BufferLifetime> buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by earlier start so the result is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first_step < buffers[b].first_step;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;  // [begin, end) of overlapping placed buffers
  for (size_t index : order) {
    const BufferLifetime& buffer = buffers[index];
    const size_t size = AlignUp(buffer.bytes);
    if (size == 0) continue;
    busy.clear();
    for (size_t other : placed) {
      if (Overlap(buffer, buffers[other])) {
        busy.emplace_back(plan.offsets[other], plan.offsets[other] + AlignUp(buffers[other].bytes));
      }
    }
    std::sort(busy.begin(), busy.end());
    // Lowest gap that fits.
    size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (begin >= offset + size) break;
      offset = std::max(offset, end);
    }
    plan.offsets[index] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(index);
  }
  return plan;
}

}  // namespace brigade::engine::onnx
