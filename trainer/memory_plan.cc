// MemoryPlan: greedy placement of buffers with lifetimes (trainer/memory_plan.h).
#include "trainer/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace flashtick {

size_t PlanArena(std::vector<PlannedBuffer>& buffers, size_t align) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  auto bytes = [&](size_t i) { return (buffers[i].view->bytes() + align - 1) / align * align; };
  // Largest first; ties by first use, so the plan does not depend on sort internals.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (bytes(a) != bytes(b)) return bytes(a) > bytes(b);
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  size_t arena = 0;
  for (size_t i : order) {
    PlannedBuffer& b = buffers[i];
    if (!b.used()) continue;
    // Address ranges of the placed buffers alive at the same time as b, by start.
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t j : placed) {
      const PlannedBuffer& o = buffers[j];
      if (o.first <= b.last && b.first <= o.last) busy.push_back({o.offset, o.offset + bytes(j)});
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + bytes(i) <= lo) break;  // fits in the gap below this range
      offset = std::max(offset, hi);
    }
    b.offset = offset;
    arena = std::max(arena, offset + bytes(i));
    placed.push_back(i);
  }
  return arena;
}

}  // namespace flashtick
