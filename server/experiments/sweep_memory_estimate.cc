// SweepMemoryEstimate (see sweep_memory_estimate.h).
#include "server/experiments/sweep_memory_estimate.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ticks/features.h"

namespace flashtick {
namespace {

// Per session step: the grid (bid, ask, flow as doubles), its features
// (kNumFeatures floats), labels and returns, and the normalised copy a fold
// trains on, rounded up.
constexpr double kBytesPerDayStep = 3 * 8 + 2 * kNumFeatures * 4 + 16 + 40;
// Per parameter: weights, gradient, two optimizer moments, the checkpoint's copy
// being written, in float32.
constexpr double kBytesPerParam = 5 * 4;
// Per token, layer and width unit: the saved activations of attention (q, k, v, o,
// norms) and of the MLP (mlp_ratio wide, before and after the GELU), float32,
// doubled for a Hessian-vector product's second pass.
constexpr double kActivationUnits = 12;

std::string Gb(double bytes) { return absl::StrFormat("%.2f GB", bytes / 1e9); }

}  // namespace

SweepMemoryEstimate EstimateSweepMemory(const SweepConfig& c) {
  SweepMemoryEstimate e;
  double steps = 0;
  if (c.data.csv) {
    const CsvDataConfig& v = c.data.csv_data;
    const double days = v.max_days > 0 ? v.max_days : 1;  // the file bounds the rest
    steps = days * static_cast<double>(v.session.steps);
  } else {
    steps = static_cast<double>(c.data.synthetic.days) *
            static_cast<double>(c.data.synthetic.steps_per_day);
  }
  e.data_bytes = steps * kBytesPerDayStep;

  const double w = c.model.width, layers = c.model.layers;
  const double kv = c.model.heads > 0 ? static_cast<double>(c.model.kv_heads) / c.model.heads : 1;
  const double per_layer = w * w * (2 + 2 * kv) + 2 * c.model.mlp_ratio * w * w + 8 * w;
  const double params = layers * per_layer + (kNumFeatures + 8) * w;
  const double arms_at_once =
      static_cast<double>(std::max(1, c.max_parallel_arms)) * std::max(1, c.replicas_per_arm);
  e.model_bytes = params * kBytesPerParam * arms_at_once;

  const int64_t longest = c.contexts.empty() ? 1 : *std::max_element(c.contexts.begin(),
                                                                      c.contexts.end());
  const double tokens = c.optimizer.micro_batch > 0
                            ? static_cast<double>(c.optimizer.micro_batch) * longest
                            : static_cast<double>(std::max(c.optimizer.tokens_per_step, longest));
  e.activation_bytes = tokens * layers * w * (kActivationUnits + 2 * c.model.mlp_ratio) * 4 * 2 *
                       static_cast<double>(std::max(1, c.max_parallel_arms));
  return e;
}

int64_t DefaultExperimentMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t{8} << 30;
  return static_cast<int64_t>(pages) * page / 4 * 3;
}

absl::Status CheckSweepMemory(const SweepConfig& config, int64_t limit_bytes,
                              bool arms_elsewhere) {
  SweepConfig c = config;
  if (arms_elsewhere) c.max_parallel_arms = c.replicas_per_arm = 1;
  const SweepMemoryEstimate e = EstimateSweepMemory(c);
  if (e.total() <= static_cast<double>(limit_bytes)) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "this sweep needs about ", Gb(e.total()), " of memory (days ", Gb(e.data_bytes),
      ", models and optimizer state ", Gb(e.model_bytes), ", activations ",
      Gb(e.activation_bytes), "); this server allows ", Gb(static_cast<double>(limit_bytes)),
      " (--experiment-memory-mb): use fewer or shorter days, a smaller model, a smaller "
      "tokens_per_step or micro_batch, or fewer parallel arms"));
}

}  // namespace flashtick
