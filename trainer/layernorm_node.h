// LayerNormNode: y = LayerNorm(x; γ, β) over the last dim (kernels/ops/layernorm.h).
// Backward: kLayerNormBwd (dx, dγ, dβ). Backward-over-backward: kLayerNormBwdBwd with
// cotangents (ĝx, vγ, vβ) gives âx, hvγ and ĝy (docs/derivations/layernorm_bwd_bwd.md).
#pragma once

#include "trainer/graph_node.h"

namespace flashtick {

class LayerNormNode : public Node {
 public:
  LayerNormNode(Activation* x, Activation* y, int gamma, int beta, float eps)
      : x_(x), y_(y), g_(gamma), b_(beta), eps_(eps) {}
  const char* kind() const override { return "layernorm"; }
  NodeIo Io() const override { return {{x_}, {y_}, {x_}}; }
  absl::Status Forward(Workspace& ws, GraphParams& p) override;
  absl::Status Backward(Workspace& ws, GraphParams& p, Sweep s) override;
  absl::Status BackwardBackward(Workspace& ws, GraphParams& p) override;
  absl::Status Recompute(Workspace& ws, GraphParams& p, const TensorView& out) override;
  Activation* recompute_input() const override { return x_; }

 private:
  OpDesc Desc(Op op) const;
  Activation *x_, *y_;
  int g_, b_;
  float eps_;
};

}  // namespace flashtick
