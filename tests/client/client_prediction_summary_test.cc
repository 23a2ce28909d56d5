// Prediction summary: last-step probabilities and argmax shares over the
// returned steps, computed from a hand-made answer.
#include "client/prediction_summary.h"

#include <gtest/gtest.h>

namespace flashtick {
namespace {

TEST(PredictionSummary, LastStepAndArgmaxShares) {
  InferResult result;
  result.batch = 1;
  result.steps = 4;
  result.classes = 3;
  result.probs = {0.7f, 0.2f, 0.1f,   // down
                  0.1f, 0.8f, 0.1f,   // flat
                  0.2f, 0.3f, 0.5f,   // up
                  0.1f, 0.2f, 0.7f};  // up
  result.kernel_path = "cpu_flash_tiled";
  result.device = "cpu";
  result.latency_seconds = 0.5;
  const PredictionSummary s = Summarize(result, 4, "m");
  EXPECT_FLOAT_EQ(s.last[0], 0.1f);
  EXPECT_FLOAT_EQ(s.last[2], 0.7f);
  EXPECT_DOUBLE_EQ(s.argmax_share[0], 0.25);
  EXPECT_DOUBLE_EQ(s.argmax_share[1], 0.25);
  EXPECT_DOUBLE_EQ(s.argmax_share[2], 0.5);
  const std::string text = FormatSummary(s);
  EXPECT_NE(text.find("p(up)=0.7000"), std::string::npos) << text;
  EXPECT_NE(text.find("up 50.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu_flash_tiled on cpu"), std::string::npos) << text;
}

}  // namespace
}  // namespace flashtick
