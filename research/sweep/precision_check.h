// Precision check (docs/research/sweeps.md, "How it runs"): the chosen arm's
// model on a sample test day, run
// on the sweep's backend in its serving precision (bf16 Flash kernels on CUDA;
// float32 on the CPU backend, which has no bf16 path — the report says so) and on
// the CPU float64 reference, over the same windows (day_predictor.h).
//   logits: Predict returns probabilities, so the logits are recovered up to the
//           softmax's additive constant as z_c = log p_c − mean_c log p_c
//   max relative logit error = max |z_fast − z_ref| / max |z_ref| over every
//           scored position and class (normwise, so near-zero logits of an
//           undecided model do not divide by ~0); Predict returns float32, so the
//           floor of what this can see is ~1e-7
//   label flips = share of scored positions whose argmax class (classification.h
//           tie rules) differs between the two runs
// The kernel path of each run is reported; a run whose path is not the one the
// backend should take (a silent fallback) fails the check.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "research/sweep/day_predictor.h"

namespace flashtick {

struct PrecisionReport {
  bool ran = false;
  std::string note;  // why it did not run, or what it compared
  std::string arm_id, date;
  int64_t windows = 0, positions = 0;
  std::string fast_path, fast_dtype, reference_path, reference_dtype;
  double max_rel_logit_error = 0, max_abs_prob_error = 0;
  int64_t flips = 0;
  double flip_share = 0;
  bool early = false;  // run while other arms trained (early_precision_check.h)
};

nlohmann::json PrecisionToJson(const PrecisionReport& p);

// model_dir: an exported model (config.json + model.safetensors). reference_threads:
// the float64 CPU reference's threads (0: every core). stop (may be empty): asked between
// layers of both forwards; true ends the check with CANCELLED (a cancelled sweep does not
// wait tens of seconds for a check whose report it will not write).
absl::StatusOr<PrecisionReport> RunPrecisionCheck(const std::string& model_dir, Backend* backend,
                                                  const std::vector<float>& features,
                                                  std::vector<EvalWindow> windows,
                                                  int64_t context, int64_t batch,
                                                  int max_windows, int reference_threads = 0,
                                                  const std::function<bool()>& stop = {});

}  // namespace flashtick
