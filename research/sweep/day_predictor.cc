// DayPredictor (see day_predictor.h).
#include "research/sweep/day_predictor.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "common/status_macros.h"
#include "ticks/features.h"
#include "research/labels/deeplob.h"

namespace flashtick {

std::vector<EvalWindow> PlanDayWindows(int64_t day_offset, const std::vector<int8_t>& labels,
                                       int64_t context, int64_t stride) {
  std::vector<EvalWindow> out;
  const int64_t steps = static_cast<int64_t>(labels.size());
  int64_t first = 0, last = steps - 1;
  while (first < steps && labels[first] < 0) ++first;
  while (last >= 0 && labels[last] < 0) --last;
  stride = std::max<int64_t>(1, std::min(stride, context));
  for (int64_t lo = first; lo <= last; lo += stride) {
    const int64_t hi = std::min(lo + stride - 1, last);
    bool any = false;
    for (int64_t t = lo; t <= hi && !any; ++t) any = labels[t] >= 0;
    if (any) out.push_back({day_offset + hi, hi - lo + 1});
  }
  return out;
}

absl::StatusOr<std::vector<float>> RunWindows(Transformer* model, const std::vector<float>& features,
                                              const std::vector<EvalWindow>& windows,
                                              int64_t context, int64_t batch,
                                              const std::function<bool()>& stop) {
  const int64_t f = kNumFeatures, n = context;
  std::vector<float> out;
  out.reserve(windows.size() * n * kNumClasses);
  std::vector<float> ticks;
  for (size_t w0 = 0; w0 < windows.size(); w0 += batch) {
    const int64_t b = std::min<int64_t>(batch, static_cast<int64_t>(windows.size() - w0));
    ticks.assign(static_cast<size_t>(b * n * f), 0.0f);
    for (int64_t i = 0; i < b; ++i) {
      const int64_t start = windows[w0 + i].end - n + 1;
      for (int64_t r = std::max<int64_t>(0, -start); r < n; ++r) {
        const int64_t g = start + r;
        std::copy(features.begin() + g * f, features.begin() + (g + 1) * f,
                  ticks.begin() + (i * n + r) * f);
      }
    }
    ASSIGN_OR_RETURN(std::vector<float> probs,
                     model->Predict(absl::MakeConstSpan(ticks), b, n, /*last_only=*/false, stop));
    if (static_cast<int64_t>(probs.size()) != b * n * kNumClasses) {
      return absl::InternalError("predict returned the wrong number of probabilities");
    }
    out.insert(out.end(), probs.begin(), probs.end());
  }
  return out;
}

absl::StatusOr<std::vector<double>> PredictDay(Transformer* model,
                                               const std::vector<float>& features,
                                               int64_t day_offset,
                                               const std::vector<int8_t>& labels,
                                               int64_t context, int64_t stride, int64_t batch) {
  const std::vector<EvalWindow> windows = PlanDayWindows(day_offset, labels, context, stride);
  ASSIGN_OR_RETURN(std::vector<float> probs, RunWindows(model, features, windows, context, batch));
  std::vector<double> day(labels.size() * kNumClasses, 1.0 / kNumClasses);
  for (size_t w = 0; w < windows.size(); ++w) {
    for (int64_t r = context - windows[w].scored; r < context; ++r) {
      const int64_t t = windows[w].end - (context - 1 - r) - day_offset;
      const float* p = &probs[(w * context + r) * kNumClasses];
      for (int c = 0; c < kNumClasses; ++c) day[t * kNumClasses + c] = p[c];
    }
  }
  return day;
}

}  // namespace flashtick
