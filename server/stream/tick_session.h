// TickSession: the state of one flashtick.v1.TickStream session (one instrument
// on one day): the steps received so far and their feature rows [T, F]. Pure (no
// gRPC), so its validation is unit-tested. Raw ticks go onto a SessionGrid and
// through ComputeFeatures (ticks/features.h), the same function training uses,
// so streamed features equal offline features bit for bit.
// State modes: "incremental" keeps a DecodeState (model/decode_state.h),
// the per-layer key/value cache, so answering a step costs O(T·d) (PredictLast);
// "recompute" (a backend without attention_decode) predicts from all T rows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flashtick/v1/tick_stream.pb.h"
#include "model/decode_state.h"
#include "model/transformer.h"
#include "ticks/features.h"

namespace flashtick {

class TickSession {
 public:
  // features: F of the model; max_steps: the server's limit for this model.
  // decode: how the session's DecodeState steps (DecodeOptions::capture: replay a
  // captured step, ServerOptions::decode_graphs).
  TickSession(int features, int64_t max_steps, std::string instrument, std::string date,
              DecodeOptions decode = {});

  // Appends one step (a Tick or a FeatureRow). Steps must arrive in order from
  // 0 and a session is either all ticks or all feature rows. INVALID_ARGUMENT
  // for order, kind, width, NaN/Inf or non-positive prices; RESOURCE_EXHAUSTED
  // past max_steps. On error the session is unchanged.
  absl::Status Append(const v1::TickStreamRequest& request);

  int64_t steps() const { return steps_; }
  int features() const { return features_; }
  // [steps, F] row-major.
  const std::vector<float>& rows() const { return rows_; }

  // Probabilities [classes] of the last appended step by incremental decoding:
  // the rows the decode state has not seen yet (predict_every > 1 skips answers,
  // not rows) go through model->Step in order, the state being created on first
  // use. Requires model->SupportsDecode(), the same model on every call, and
  // steps() ≥ 1. On error the state keeps the rows it took and the next call
  // resumes from there.
  absl::StatusOr<std::vector<float>> PredictLast(Transformer* model);
  // What a session of `model` can hold by the end of a day of max_steps: its feature
  // rows (fp32, host) and, when `incremental`, every layer's key and value cache rows
  // (DecodeState::CacheBytes at DecodeState::CapacityFor(max_steps), the capacity the
  // doubling cache reaches) — the figure
  // StreamAdmission reserves when the session opens.
  static int64_t DayBytes(const Transformer& model, int features, int64_t max_steps,
                          bool incremental);

  // Steps the decode state holds (0 before the first PredictLast).
  int64_t decoded_steps() const { return state_ ? state_->steps() : 0; }

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
  std::unique_ptr<DecodeState> state_;  // created by the first PredictLast
  DecodeOptions decode_;
  bool capture_reported_ = false;
};

}  // namespace flashtick
