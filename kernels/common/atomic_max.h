// RaiseToAtLeast: the high-water-mark update every memory counter here uses (the
// backends' used/peak, MemoryScope's per-scope peak): peak = max(peak, value) without
// a lock, when several threads allocate at once.
#pragma once

#include <atomic>
#include <cstdint>

namespace flashtick {

inline void RaiseToAtLeast(std::atomic<int64_t>& peak, int64_t value) {
  int64_t seen = peak.load();
  // compare_exchange_weak refreshes `seen` on failure; stop once peak is already higher.
  while (value > seen && !peak.compare_exchange_weak(seen, value)) {
  }
}

}  // namespace flashtick
