// PredictionSummary: what `flashtick predict` prints about one answer: steps,
// the last step's probabilities, the share of steps whose argmax is down / flat
// / up, latency and the kernel path that ran. Pure, so it is unit-tested.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "client/inference_client.h"

namespace flashtick {

struct PredictionSummary {
  int64_t steps_sent = 0;
  int64_t steps_returned = 0;
  std::array<float, 3> last{};           // p(down), p(flat), p(up) at the last step
  std::array<double, 3> argmax_share{};  // share of returned steps per argmax class
  double latency_seconds = 0;
  double compute_seconds = 0;
  std::string kernel_path;
  std::string device;
  std::string model;
  std::string model_version;
};

// Row 0 of `result` (the CLI sends one day). result.classes must be 3.
PredictionSummary Summarize(const InferResult& result, int64_t steps_sent,
                            const std::string& model);
std::string FormatSummary(const PredictionSummary& summary);

}  // namespace flashtick
