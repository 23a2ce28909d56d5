// CheckGlobalBatch: the checks of a data-parallel step's global batch, shared by the
// in-process DataParallelTrainer and the one-replica-per-process ProcessGroupTrainer:
// B a positive multiple of the replicas, ticks [B, T, F] and labels [B, T], every
// label −1 or a class, at least one labelled step. Run before any replica starts, so a
// bad batch is refused by every replica alike instead of stranding the others.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "model/config.h"

namespace flashtick {

absl::Status CheckGlobalBatch(const ModelConfig& config, absl::Span<const float> ticks,
                              absl::Span<const int32_t> labels, int64_t B, int64_t T,
                              int64_t replicas);

}  // namespace flashtick
