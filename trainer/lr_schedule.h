// LrSchedule: linear warmup then cosine decay (Loshchilov & Hutter 2017, SGDR without
// restarts; the GPT-2/3 recipe). For the 1-based step t:
//   t ≤ warmup:           lr = peak·t/warmup
//   warmup < t ≤ total:   lr = min + ½(peak − min)(1 + cos(π·(t − warmup)/(total − warmup)))
//   t > total:            lr = min,           min = peak·min_ratio
// warmup = 0 starts at the peak; total ≤ warmup means no decay phase.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace flashtick {

struct LrSchedule {
  double peak = 3e-4;
  int64_t warmup_steps = 0;
  int64_t total_steps = 0;  // end of the cosine; 0: constant after warmup
  double min_ratio = 0.1;

  absl::Status Validate() const;
  double At(int64_t step) const;
};

}  // namespace flashtick
