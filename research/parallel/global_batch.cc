// CheckGlobalBatch: a data-parallel global batch's shape and labels
// (research/parallel/global_batch.h).
#include "research/parallel/global_batch.h"

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::Status CheckGlobalBatch(const ModelConfig& c, absl::Span<const float> ticks,
                              absl::Span<const int32_t> labels, int64_t B, int64_t T,
                              int64_t replicas) {
  const int64_t R = replicas;
  if (B < 1 || T < 1 || B % R != 0)
    return absl::InvalidArgumentError(absl::StrCat("data-parallel batch B=", B, " T=", T,
                                                   ": B must be a positive multiple of the ", R,
                                                   " replicas"));
  if (static_cast<int64_t>(ticks.size()) != B * T * c.features ||
      static_cast<int64_t>(labels.size()) != B * T)
    return absl::InvalidArgumentError(
        absl::StrCat("ticks must be [B=", B, ", T=", T, ", F=", c.features,
                     "] and labels [B, T]; got ", ticks.size(), " and ", labels.size(), " values"));
  int64_t labelled = 0;
  for (int64_t m = 0; m < B * T; ++m) {
    const int32_t y = labels[m];
    if (y != -1 && (y < 0 || y >= c.classes))
      return absl::InvalidArgumentError(absl::StrCat("label ", y, " at b=", m / T, " t=", m % T,
                                                     " is not -1 or in [0, ", c.classes, ")"));
    labelled += y >= 0;
  }
  if (labelled == 0)
    return absl::InvalidArgumentError("the batch has no labelled steps (every label is -1)");
  return absl::OkStatus();
}

}  // namespace flashtick
