// ResidualNode: y = x1 + x2 (the skip connections). Backward copies dy to both inputs;
// backward-over-backward sums their ĝ into ĝy. Nothing second-order reaches the values
// (the map is linear and has no parameters).
#pragma once

#include "trainer/graph_node.h"

namespace flashtick {

class ResidualNode : public Node {
 public:
  ResidualNode(Activation* x1, Activation* x2, Activation* y) : x1_(x1), x2_(x2), y_(y) {}
  // Reads no values; its backward-over-backward only sums ĝ.
  const char* kind() const override { return "residual"; }
  NodeIo Io() const override { return {{x1_, x2_}, {y_}, {}, false, false}; }
  absl::Status Forward(Workspace& ws, GraphParams& p) override;
  absl::Status Backward(Workspace& ws, GraphParams& p, Sweep s) override;
  absl::Status BackwardBackward(Workspace& ws, GraphParams& p) override;

 private:
  Activation *x1_, *x2_, *y_;
};

}  // namespace flashtick
