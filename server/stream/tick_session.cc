// Tick session accumulation and validation, and the incremental prediction of the
// last step through the session's decode state (see tick_session.h).
#include "server/stream/tick_session.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/logging.h"

namespace flashtick {

TickSession::TickSession(int features, int64_t max_steps, std::string instrument,
                         std::string date, DecodeOptions decode)
    : features_(features), max_steps_(max_steps), decode_(decode) {
  grid_.instrument = std::move(instrument);
  grid_.date = std::move(date);
  // The whole day's rows up front (StreamAdmission has reserved them: docs/serving.md,
  // "Tick-stream limits"): a growing vector copied every row so far at each doubling,
  // a copy of up to the day's 562 KB inside one tick's answer.
  rows_.reserve(static_cast<size_t>(std::max<int64_t>(0, max_steps) * features));
}

absl::Status TickSession::CheckStep(int64_t step) const {
  if (step != steps_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "step ", step, " arrived but the session expects step ", steps_,
        "; send the 1-second grid in order from the open (step 0), one message per step"));
  }
  if (steps_ >= max_steps_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the session reached this server's limit of ", max_steps_,
        " steps (the smaller of --max-seq-len and the model's max_context); open a new session"));
  }
  return absl::OkStatus();
}

absl::Status TickSession::Append(const v1::TickStreamRequest& request) {
  switch (request.kind_case()) {
    case v1::TickStreamRequest::kTick:
      if (kind_ == Kind::kFeatures) {
        return absl::InvalidArgumentError(
            "this session streams feature rows; do not mix in raw ticks");
      }
      RETURN_IF_ERROR(AppendTick(request.tick()));
      kind_ = Kind::kTicks;
      return absl::OkStatus();
    case v1::TickStreamRequest::kFeatures:
      if (kind_ == Kind::kTicks) {
        return absl::InvalidArgumentError(
            "this session streams raw ticks; do not mix in feature rows");
      }
      RETURN_IF_ERROR(AppendFeatures(request.features()));
      kind_ = Kind::kFeatures;
      return absl::OkStatus();
    case v1::TickStreamRequest::kOpen:
      return absl::InvalidArgumentError("the session is already open; send ticks");
    default:
      return absl::InvalidArgumentError("empty TickStreamRequest: set tick or features");
  }
}

absl::Status TickSession::AppendTick(const v1::Tick& tick) {
  if (features_ != kNumFeatures) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this model takes F = ", features_, " features per step but raw ticks give the ",
        kNumFeatures, " of ticks/features.h; send feature rows instead"));
  }
  RETURN_IF_ERROR(CheckStep(tick.step()));
  if (!std::isfinite(tick.bid()) || !std::isfinite(tick.ask()) || !std::isfinite(tick.flow())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tick at step ", tick.step(), " has a non-finite bid, ask or flow; carry the last "
        "quote forward and send flow 0 for a quiet second"));
  }
  if (tick.bid() <= 0 || tick.ask() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("tick at step ", tick.step(),
                                                   " has a non-positive price (bid ", tick.bid(),
                                                   ", ask ", tick.ask(), ")"));
  }
  grid_.bid.push_back(tick.bid());
  grid_.ask.push_back(tick.ask());
  grid_.flow.push_back(tick.flow());
  // Features are causal: earlier rows do not change, only row T-1 is new, and
  // ComputeFeatureRow is ComputeFeatures' own definition of a row (recomputing the
  // whole grid on every tick made a day O(T²)).
  const size_t at = rows_.size();
  rows_.resize(at + kNumFeatures);
  ComputeFeatureRow(grid_, grid_.steps() - 1, &rows_[at]);
  ++steps_;
  return absl::OkStatus();
}

absl::Status TickSession::AppendFeatures(const v1::FeatureRow& row) {
  RETURN_IF_ERROR(CheckStep(row.step()));
  if (row.values_size() != features_) {
    return absl::InvalidArgumentError(absl::StrCat("feature row at step ", row.step(), " has ",
                                                   row.values_size(),
                                                   " values; this model takes F = ", features_));
  }
  for (int f = 0; f < features_; ++f) {
    if (!std::isfinite(row.values(f))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feature row at step ", row.step(), " holds a non-finite value at feature ", f));
    }
  }
  rows_.insert(rows_.end(), row.values().begin(), row.values().end());
  ++steps_;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> TickSession::PredictLast(Transformer* model) {
  if (steps_ < 1)
    return absl::FailedPreconditionError("predict: the session has no steps yet");
  if (state_ != nullptr && &state_->model() != model)
    return absl::InvalidArgumentError(
        "predict: this session's decode state belongs to another model");
  if (state_ == nullptr) {
    ASSIGN_OR_RETURN(state_, DecodeState::Create(*model, DecodeState::kDefaultInitialCapacity,
                                                 decode_));
  }
  const int64_t F = features_;
  std::vector<float> probs;
  // Catch up on every row the state lacks; only the last step's answer is kept.
  for (int64_t t = state_->steps(); t < steps_; ++t) {
    ASSIGN_OR_RETURN(probs, model->Step(state_.get(), absl::MakeConstSpan(rows_.data() + t * F, F)));
  }
  if (decode_.capture && !capture_reported_ && !state_->capture_error().ok()) {
    // Once per session: this session now launches op by op (still correct, slower).
    capture_reported_ = true;
    LogWarning(absl::StrCat("tick session: decode graphs are off for this session: ",
                            state_->capture_error().message()));
  }
  if (probs.empty())
    return absl::FailedPreconditionError(absl::StrCat(
        "predict: step ", steps_ - 1, " was already answered (no new rows since)"));
  return probs;
}

int64_t TickSession::DayBytes(const Transformer& model, int features, int64_t max_steps,
                              bool incremental) {
  const int64_t rows_bytes = max_steps * features * static_cast<int64_t>(sizeof(float));
  // The caches a session's state holds by its last step: grown by doubling, so up to
  // the capacity that covers max_steps (32,768 rows for a 23,400-step day), not max_steps,
  // and the zero sink row of a model whose layers exclude the step itself.
  const int64_t rows = max_steps + DecodeState::SinkRows(model.config());
  return rows_bytes +
         (incremental ? DecodeState::CacheBytes(model, DecodeState::CapacityFor(model, rows)) : 0);
}

}  // namespace flashtick
