// MemoryPlan: offsets in one arena for the training graph's activation buffers, from
// their lifetimes on the graph's timeline (trainer/transformer_graph.h: forward,
// backward, backward-over-backward and the HVP's last backward, one tick per node
// visit). Two buffers share bytes only when their lifetimes [first, last] are disjoint,
// so a buffer is dead (its last reader has run) before another one is written there.
// Placement is greedy by size, largest first, each at the lowest aligned offset that
// does not collide with a placed buffer alive at the same time (as XLA's and TVM's
// static planners do); the arena is the highest end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/tensor.h"

namespace flashtick {

struct PlannedBuffer {
  TensorView* view = nullptr;  // its data is set to arena + offset by the graph
  int64_t first = INT64_MAX, last = -1;  // ticks of its first and last use; last < 0: unused
  size_t offset = 0;

  void Use(int64_t tick) {
    if (tick < first) first = tick;
    if (tick > last) last = tick;
  }
  bool used() const { return last >= 0; }
};

// Sets every used buffer's offset (multiples of `align`) and returns the arena's size.
size_t PlanArena(std::vector<PlannedBuffer>& buffers, size_t align);

}  // namespace flashtick
