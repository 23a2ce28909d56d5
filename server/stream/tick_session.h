// TickSession: the state of one flashtick.v1.TickStream session (one instrument
// on one day): the steps received so far and their feature rows [T, F]. Pure (no
// gRPC), so its validation is unit-tested. Raw ticks go onto a SessionGrid and
// through ComputeFeatures (train/features.h), the same function training uses,
// so streamed features equal offline features bit for bit.
// Foundation mode "recompute": the caller predicts from all T rows each step;
// issue 6 adds per-layer key/value state here so a step costs O(T·d).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "flashtick/v1/tick_stream.pb.h"
#include "train/features.h"

namespace flashtick {

class TickSession {
 public:
  // features: F of the model; max_steps: the server's limit for this model.
  TickSession(int features, int64_t max_steps, std::string instrument, std::string date);

  // Appends one step (a Tick or a FeatureRow). Steps must arrive in order from
  // 0 and a session is either all ticks or all feature rows. INVALID_ARGUMENT
  // for order, kind, width, NaN/Inf or non-positive prices; RESOURCE_EXHAUSTED
  // past max_steps. On error the session is unchanged.
  absl::Status Append(const v1::TickStreamRequest& request);

  int64_t steps() const { return steps_; }
  int features() const { return features_; }
  // [steps, F] row-major.
  const std::vector<float>& rows() const { return rows_; }

 private:
  absl::Status AppendTick(const v1::Tick& tick);
  absl::Status AppendFeatures(const v1::FeatureRow& row);
  absl::Status CheckStep(int64_t step) const;

  enum class Kind { kUnset, kTicks, kFeatures };
  int features_;
  int64_t max_steps_;
  Kind kind_ = Kind::kUnset;
  int64_t steps_ = 0;
  SessionGrid grid_;
  std::vector<float> rows_;
};

}  // namespace flashtick
