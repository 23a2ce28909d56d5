// LrSchedule: warmup + cosine (trainer/lr_schedule.h).
#include "trainer/lr_schedule.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::Status LrSchedule::Validate() const {
  if (!(peak >= 0) || !std::isfinite(peak))
    return absl::InvalidArgumentError(
        absl::StrCat("learning rate must be finite and >= 0, got ", peak));
  if (warmup_steps < 0 || total_steps < 0)
    return absl::InvalidArgumentError("warmup_steps and total_steps must be >= 0");
  if (!(min_ratio >= 0 && min_ratio <= 1))
    return absl::InvalidArgumentError(absl::StrCat("min_ratio must be in [0, 1], got ", min_ratio));
  return absl::OkStatus();
}

double LrSchedule::At(int64_t step) const {
  if (step < 1) step = 1;
  if (step <= warmup_steps)
    return peak * static_cast<double>(step) / static_cast<double>(warmup_steps);
  if (total_steps <= warmup_steps) return peak;
  const double min_lr = peak * min_ratio;
  if (step > total_steps) return min_lr;
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps);
  return min_lr + 0.5 * (peak - min_lr) * (1.0 + std::cos(M_PI * progress));
}

}  // namespace flashtick
