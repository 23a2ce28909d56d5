// Prediction summary (see prediction_summary.h).
#include "client/prediction_summary.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace flashtick {

PredictionSummary Summarize(const InferResult& result, int64_t steps_sent,
                            const std::string& model) {
  PredictionSummary s;
  s.steps_sent = steps_sent;
  s.steps_returned = result.steps;
  s.latency_seconds = result.latency_seconds;
  s.compute_seconds = result.compute_seconds;
  s.kernel_path = result.kernel_path;
  s.device = result.device;
  s.model = model;
  s.model_version = result.model_version;
  if (result.steps == 0 || result.classes != 3) return s;
  std::array<int64_t, 3> counts{};
  for (int64_t t = 0; t < result.steps; ++t) {
    const float* p = &result.probs[t * 3];
    counts[std::max_element(p, p + 3) - p]++;  // ties go to the lower class
  }
  for (int c = 0; c < 3; ++c) {
    s.last[c] = result.probs[(result.steps - 1) * 3 + c];
    s.argmax_share[c] = static_cast<double>(counts[c]) / static_cast<double>(result.steps);
  }
  return s;
}

std::string FormatSummary(const PredictionSummary& s) {
  return absl::StrFormat(
      "model            %s (version %s)\n"
      "steps            %d sent, %d returned\n"
      "last step        p(down)=%.4f  p(flat)=%.4f  p(up)=%.4f\n"
      "argmax share     down %.1f%%  flat %.1f%%  up %.1f%%  (over returned steps)\n"
      "latency          %.3f s round trip, %.3f s model compute on the server\n"
      "kernel path      %s on %s\n",
      s.model, s.model_version, s.steps_sent, s.steps_returned, s.last[0], s.last[1], s.last[2],
      100 * s.argmax_share[0], 100 * s.argmax_share[1], 100 * s.argmax_share[2],
      s.latency_seconds, s.compute_seconds, s.kernel_path, s.device);
}

}  // namespace flashtick
