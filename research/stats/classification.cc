// Classification metrics (see classification.h).
#include "research/stats/classification.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {
constexpr double kProbClip = 1e-15;
constexpr double kSumTolerance = 1e-3;
}  // namespace

void ScoreConfusion(ClassificationMetrics* m) {
  int64_t correct = 0;
  for (int c = 0; c < kNumClasses; ++c) correct += m->confusion[c][c];
  m->accuracy = static_cast<double>(correct) / m->samples;
  // F1 per class; the macro mean is over classes present in truth or predictions.
  int present = 0;
  double f1_sum = 0;
  for (int c = 0; c < kNumClasses; ++c) {
    int64_t tp = m->confusion[c][c], fp = 0, fn = 0;
    for (int o = 0; o < kNumClasses; ++o) {
      if (o == c) continue;
      fp += m->confusion[o][c];
      fn += m->confusion[c][o];
    }
    m->precision[c] = tp + fp > 0 ? static_cast<double>(tp) / (tp + fp) : 0.0;
    m->recall[c] = tp + fn > 0 ? static_cast<double>(tp) / (tp + fn) : 0.0;
    const int64_t denom = 2 * tp + fp + fn;
    m->f1[c] = denom > 0 ? 2.0 * tp / denom : 0.0;
    if (denom > 0) {
      ++present;
      f1_sum += m->f1[c];
    }
  }
  m->macro_f1 = present > 0 ? f1_sum / present : 0.0;
}

int8_t PredictClass(const double* p) {
  const double top = std::max({p[kDown], p[kFlat], p[kUp]});
  if (p[kFlat] == top) return kFlat;
  return p[kDown] == top ? kDown : kUp;
}

absl::StatusOr<ClassificationMetrics> Classify(const std::vector<int8_t>& labels,
                                               const std::vector<double>& probs) {
  if (probs.size() != labels.size() * kNumClasses) {
    return absl::InvalidArgumentError(absl::StrCat("metrics: ", labels.size(), " labels need ",
                                                   labels.size() * kNumClasses,
                                                   " probabilities, got ", probs.size()));
  }
  ClassificationMetrics m;
  double loss = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const int8_t y = labels[i];
    if (y == kNoLabel) continue;
    if (y < 0 || y >= kNumClasses) {
      return absl::InvalidArgumentError(absl::StrCat("metrics: label ", int{y}, " at ", i));
    }
    const double* p = &probs[i * kNumClasses];
    double total = 0;
    for (int c = 0; c < kNumClasses; ++c) {
      if (!std::isfinite(p[c]) || p[c] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("metrics: probability ", p[c], " at row ", i));
      }
      total += p[c];
    }
    if (std::fabs(total - 1) > kSumTolerance) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics: probabilities of row ", i, " sum to ", total, ", not 1"));
    }
    const int8_t pred = PredictClass(p);
    ++m.confusion[y][pred];
    loss -= std::log(std::max(p[y], kProbClip));
    ++m.samples;
  }
  if (m.samples == 0) return absl::InvalidArgumentError("metrics: no labelled samples");
  m.log_loss = loss / m.samples;
  ScoreConfusion(&m);
  return m;
}

}  // namespace flashtick
