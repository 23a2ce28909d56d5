// Out-of-sample classification metrics for the 3-class head (down/flat/up):
// accuracy, per-class precision/recall/F1, macro-F1, log-loss and the confusion
// matrix (rows = true class, columns = predicted).
//   Prediction: argmax of the probabilities; ties go to flat when flat is among
//   the maxima (no position is the cautious call), else to the lower class.
//   F1_c = 2·TP/(2·TP + FP + FN); macro-F1 = mean over the classes that occur in
//   the truth or the predictions (a class absent from both is skipped; one
//   present with 2·TP + FP + FN > 0 and TP = 0 scores 0) — scikit-learn's
//   f1_score(average="macro") with its default labels.
//   Log-loss = −mean log max(p_y, 1e−15) (scikit-learn's clipping).
// Samples labelled kNoLabel are skipped.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "research/labels/deeplob.h"

namespace flashtick {

struct ClassificationMetrics {
  int64_t samples = 0;
  double accuracy = 0;
  double macro_f1 = 0;
  double log_loss = 0;
  std::array<std::array<int64_t, kNumClasses>, kNumClasses> confusion{};  // [true][pred]
  std::array<double, kNumClasses> precision{}, recall{}, f1{};
};

// The predicted class for one row of probabilities [down, flat, up].
int8_t PredictClass(const double* probs);

// `probs` is [n, 3] row-major; each row must be finite, ≥ 0 and sum to 1 ± 1e-3.
absl::StatusOr<ClassificationMetrics> Classify(const std::vector<int8_t>& labels,
                                               const std::vector<double>& probs);

// Sets accuracy, precision, recall, f1 and macro_f1 from m->confusion and m->samples
// (> 0) by the rules above; Classify and pooled per-day metrics both score this way.
void ScoreConfusion(ClassificationMetrics* m);

}  // namespace flashtick
