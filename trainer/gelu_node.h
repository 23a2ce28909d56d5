// GeluNode: z = gelu_tanh(u), elementwise (kernels/ops/gelu.h). Backward: kGeluBwd.
// Backward-over-backward: kGeluBwdBwd with cotangent ĝu of du gives âu and ĝz.
#pragma once

#include "trainer/graph_node.h"

namespace flashtick {

class GeluNode : public Node {
 public:
  GeluNode(Activation* u, Activation* z) : u_(u), z_(z) {}
  const char* kind() const override { return "gelu"; }
  NodeIo Io() const override { return {{u_}, {z_}, {u_}}; }
  absl::Status Forward(Workspace& ws, GraphParams& p) override;
  absl::Status Backward(Workspace& ws, GraphParams& p, Sweep s) override;
  absl::Status BackwardBackward(Workspace& ws, GraphParams& p) override;
  absl::Status Recompute(Workspace& ws, GraphParams& p, const TensorView& out) override {
    return ws.Run(Desc(Op::kGelu), {u_->value}, {out});
  }
  Activation* recompute_input() const override { return u_; }

 private:
  OpDesc Desc(Op op) const {
    OpDesc d;
    d.op = op;
    d.dtype = u_->value.dtype;
    return d;
  }
  Activation *u_, *z_;
};

}  // namespace flashtick
