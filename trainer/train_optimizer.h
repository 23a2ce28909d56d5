// TrainOptimizer: AdamW or Sophia-H over every parameter tensor of a ParamStore, with
// its state (first moment m, and v for AdamW or the Hessian-diagonal EMA h for
// Sophia-H) in flat buffers on the backend. One kAdamW / kSophiaH op per tensor
// (kernels/ops/optimizer.h has the update rules), so weight decay applies to matrices
// only (ParamLayout::decay). Hyperparameters, with the published defaults:
//   AdamW (Loshchilov & Hutter 2019): beta1 0.9, beta2 0.95, eps 1e-8, weight_decay 0.1
//   Sophia-H (Liu et al. 2023): beta1 0.96, beta2 0.99 (the Hessian EMA), rho 0.04 (γ),
//     eps 1e-12, weight_decay 0.2, Hessian refresh every k = 10 steps (TrainerOptions)
// The learning rate comes from the schedule each step; grad_scale folds clipping.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "trainer/param_store.h"

namespace flashtick {

enum class OptimizerKind { kAdamW, kSophiaH };
const char* OptimizerKindName(OptimizerKind kind);  // "adamw", "sophia_h"
absl::StatusOr<OptimizerKind> ParseOptimizerKind(const std::string& name);

struct OptimizerHyper {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  double rho = 0.04;  // Sophia-H only

  // The published defaults of each optimizer (above).
  static OptimizerHyper Defaults(OptimizerKind kind);
  absl::Status Validate() const;
};

class TrainOptimizer {
 public:
  static absl::StatusOr<std::unique_ptr<TrainOptimizer>> Create(OptimizerKind kind,
                                                                const OptimizerHyper& hyper,
                                                                ParamStore* store);

  // One update of every parameter from store->grads() (times grad_scale); step is
  // 1-based (AdamW bias correction). hhat: a flat Hessian-diagonal estimate for
  // Sophia-H on refresh steps, else nullptr.
  absl::Status Step(int64_t step, double lr, double grad_scale, const TensorView* hhat);

  OptimizerKind kind() const { return kind_; }
  const OptimizerHyper& hyper() const { return hyper_; }
  // The state buffers: m, and v (AdamW) or h (Sophia-H).
  const TensorView& m() const { return m_; }
  const TensorView& second() const { return second_; }
  const char* second_name() const { return kind_ == OptimizerKind::kAdamW ? "v" : "h"; }

 private:
  TrainOptimizer(OptimizerKind kind, const OptimizerHyper& hyper, ParamStore* store)
      : kind_(kind), hyper_(hyper), store_(store) {}
  OptimizerKind kind_;
  OptimizerHyper hyper_;
  ParamStore* store_;
  TensorView m_, second_;
};

}  // namespace flashtick
