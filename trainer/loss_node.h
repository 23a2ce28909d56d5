// LossNode: L = Σ_m w_m·CE(logits_m, y_m), the softmax cross-entropy of the 3-class
// head with per-row weights w (1/#labelled rows of the whole batch for labelled rows,
// 0 for ignored ones, so micro-batches add up to the batch mean). It seeds the
// backward (dlogits = w∘(p − onehot)) and, in the backward-over-backward, turns ĝ of
// dlogits into âlogits = w∘(diag p − ppᵀ)·ĝ (kernels/ops/cross_entropy.h).
#pragma once

#include <vector>

#include "trainer/graph_node.h"

namespace flashtick {

class LossNode : public Node {
 public:
  // labels: int32 [M] on the device; weights: ParamDType [M] on the device; rows: [M]
  // per-row losses (written by Forward).
  LossNode(Activation* logits, TensorView labels, TensorView weights, TensorView rows,
           int32_t ignore_label)
      : logits_(logits), labels_(labels), weights_(weights), rows_(rows), ignore_(ignore_label) {}
  const char* kind() const override { return "cross_entropy"; }
  NodeIo Io() const override { return {{logits_}, {}, {logits_}}; }
  absl::Status Forward(Workspace& ws, GraphParams& p) override;
  // kGrad: writes the seed dlogits. kHvp: nothing (the seed does not depend on v).
  absl::Status Backward(Workspace& ws, GraphParams& p, Sweep s) override;
  absl::Status BackwardBackward(Workspace& ws, GraphParams& p) override;

  const TensorView& rows() const { return rows_; }

 private:
  OpDesc Desc(Op op) const;
  Activation* logits_;
  TensorView labels_, weights_, rows_;
  int32_t ignore_;
};

}  // namespace flashtick
