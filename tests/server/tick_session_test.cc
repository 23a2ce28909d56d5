// TickSession: streamed raw ticks give exactly the features ComputeFeatures gives
// the whole day; out-of-order steps, mixed kinds, wrong widths, NaN and the step
// limit are refused with their codes and leave the session unchanged. PredictLast
// (incremental decoding through the session's K/V cache) answers each step with
// the last row of a whole-prefix Predict, also when predict_every skips answers.
// The day's rows are reserved at open, so appending never copies them.
#include "server/stream/tick_session.h"

#include <chrono>
#include <limits>

#include <gtest/gtest.h>

#include "kernels/backend.h"
#include "model/transformer.h"
#include "ticks/features.h"

namespace flashtick {
namespace {

v1::TickStreamRequest TickMsg(int64_t step, double bid, double ask, double flow) {
  v1::TickStreamRequest request;
  auto* tick = request.mutable_tick();
  tick->set_step(step);
  tick->set_bid(bid);
  tick->set_ask(ask);
  tick->set_flow(flow);
  return request;
}

v1::TickStreamRequest RowMsg(int64_t step, int width, float value = 0.5f) {
  v1::TickStreamRequest request;
  request.mutable_features()->set_step(step);
  for (int f = 0; f < width; ++f) request.mutable_features()->add_values(value + f);
  return request;
}

TEST(TickSession, StreamedTicksEqualOfflineFeatures) {
  const SessionGrid day = SimpleSyntheticDay(11, 300);
  TickSession session(kNumFeatures, 1000, "SYNTH", "2026-01-02");
  for (int64_t t = 0; t < day.steps(); ++t) {
    ASSERT_TRUE(session.Append(TickMsg(t, day.bid[t], day.ask[t], day.flow[t])).ok());
  }
  EXPECT_EQ(session.steps(), day.steps());
  EXPECT_EQ(session.rows(), ComputeFeatures(day));
}

// The day's rows are reserved when the session opens: appending never moves them (a
// reallocation copied every row so far inside one tick's answer).
TEST(TickSession, RowsAreNeverCopiedToGrow) {
  TickSession session(kNumFeatures, 512, "SYNTH", "2026-01-02");
  ASSERT_TRUE(session.Append(RowMsg(0, kNumFeatures)).ok());
  const float* first = session.rows().data();
  for (int64_t t = 1; t < 512; ++t) ASSERT_TRUE(session.Append(RowMsg(t, kNumFeatures)).ok());
  EXPECT_EQ(session.rows().data(), first);
  EXPECT_EQ(session.rows().size(), size_t{512} * kNumFeatures);
}

TEST(TickSession, AWholeDayOfTicksAppendsInLinearTime) {
  // Recomputing every feature row on every tick made a day O(T²): 23,400 ticks
  // took seconds of feature work alone. Appending one row each is milliseconds.
  const SessionGrid day = SimpleSyntheticDay(12, kSessionSeconds);
  TickSession session(kNumFeatures, kSessionSeconds, "SYNTH", "2026-01-02");
  const auto start = std::chrono::steady_clock::now();
  for (int64_t t = 0; t < day.steps(); ++t) {
    ASSERT_TRUE(session.Append(TickMsg(t, day.bid[t], day.ask[t], day.flow[t])).ok());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_EQ(session.rows(), ComputeFeatures(day));
}

TEST(TickSession, FeatureRowsAreKeptAsSent) {
  TickSession session(kNumFeatures, 10, "", "");
  ASSERT_TRUE(session.Append(RowMsg(0, kNumFeatures, 1.0f)).ok());
  ASSERT_TRUE(session.Append(RowMsg(1, kNumFeatures, 2.0f)).ok());
  ASSERT_EQ(session.rows().size(), 2u * kNumFeatures);
  EXPECT_EQ(session.rows()[kNumFeatures], 2.0f);
}

TEST(TickSession, RefusesBadStepsWithoutChangingState) {
  TickSession session(kNumFeatures, 2, "", "");
  ASSERT_TRUE(session.Append(TickMsg(0, 100, 100.02, 5)).ok());
  auto status = session.Append(TickMsg(2, 100, 100.02, 5));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(status.message()).find("expects step 1"), std::string::npos);
  status = session.Append(TickMsg(1, std::numeric_limits<double>::quiet_NaN(), 100.02, 5));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  status = session.Append(TickMsg(1, -1, 100.02, 5));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  status = session.Append(RowMsg(1, kNumFeatures));
  EXPECT_NE(std::string(status.message()).find("do not mix"), std::string::npos);
  EXPECT_EQ(session.steps(), 1);
  EXPECT_EQ(session.rows().size(), static_cast<size_t>(kNumFeatures));
  ASSERT_TRUE(session.Append(TickMsg(1, 100.01, 100.03, -2)).ok());
  status = session.Append(TickMsg(2, 100.01, 100.03, -2));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(session.steps(), 2);
}

TEST(TickSession, FeatureRowWidthAndFiniteness) {
  TickSession session(kNumFeatures, 10, "", "");
  EXPECT_EQ(session.Append(RowMsg(0, kNumFeatures - 1)).code(),
            absl::StatusCode::kInvalidArgument);
  v1::TickStreamRequest nan_row = RowMsg(0, kNumFeatures);
  nan_row.mutable_features()->set_values(3, std::numeric_limits<float>::infinity());
  EXPECT_EQ(session.Append(nan_row).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(session.Append(v1::TickStreamRequest()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(session.steps(), 0);
}

TEST(TickSession, RawTicksNeedTheStandardFeatureWidth) {
  TickSession session(kNumFeatures + 2, 10, "", "");
  EXPECT_EQ(session.Append(TickMsg(0, 100, 100.02, 5)).code(),
            absl::StatusCode::kFailedPrecondition);
}

// With `capture`, the session's state replays a captured step (--decode-graphs).
void CheckIncrementalPredictLast(bool capture) {
  auto backend = CreateBackend("cpu");
  ASSERT_TRUE(backend.ok()) << backend.status();
  ModelConfig config;
  config.features = kNumFeatures;
  config.width = 32;
  config.heads = 4;
  config.kv_heads = 2;
  config.max_context = 512;
  auto model = Transformer::InitRandom(config, 21, backend->get());
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE((*model)->SupportsDecode());
  const SessionGrid day = SimpleSyntheticDay(12, 120);
  DecodeOptions decode;
  decode.capture = capture;
  TickSession session(kNumFeatures, 512, "SYNTH", "2026-01-02", decode);
  EXPECT_EQ(session.PredictLast(model->get()).status().code(),
            absl::StatusCode::kFailedPrecondition);  // nothing to answer yet
  int answered = 0;
  for (int64_t t = 0; t < day.steps(); ++t) {
    ASSERT_TRUE(session.Append(TickMsg(t, day.bid[t], day.ask[t], day.flow[t])).ok());
    if (t % 7 != 3) continue;  // answer every 7th step: PredictLast catches up on the rest
    auto step = session.PredictLast(model->get());
    ASSERT_TRUE(step.ok()) << "step " << t << ": " << step.status();
    EXPECT_EQ(session.decoded_steps(), t + 1);
    auto full = (*model)->Predict(session.rows(), 1, session.steps(), /*last_only=*/true);
    ASSERT_TRUE(full.ok()) << full.status();
    ASSERT_EQ(step->size(), full->size());
    for (size_t k = 0; k < full->size(); ++k)
      EXPECT_NEAR((*step)[k], (*full)[k], 1e-5) << "step " << t << " class " << k;
    ++answered;
  }
  EXPECT_EQ(answered, 17);
  // Steps 116..119 were not answered yet: this call catches up; a second answer
  // without a new row is a caller bug, reported as such.
  ASSERT_TRUE(session.PredictLast(model->get()).ok());
  EXPECT_EQ(session.decoded_steps(), day.steps());
  EXPECT_EQ(session.PredictLast(model->get()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(TickSession, IncrementalPredictLastEqualsWholePrefixPredict) {
  CheckIncrementalPredictLast(false);
}

TEST(TickSession, CapturedIncrementalPredictLastEqualsWholePrefixPredict) {
  CheckIncrementalPredictLast(true);
}

}  // namespace
}  // namespace flashtick
