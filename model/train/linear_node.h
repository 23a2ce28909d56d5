// LinearNode: y = x·Wᵀ + b, x [M, K], W [N, K], b [N] (embedding, QKV, projections,
// MLP, head). Backward (cotangent dy): dx = dy·W, dW = dyᵀ·x, db = Σ_rows dy.
// The backward is bilinear in (x, W) × dy, so its VJP with cotangents (ĝx, vW, vb)
// of (dx, dW, db) is three matmuls and a bias:
//   ĝy = ĝx·Wᵀ + x·vWᵀ + vb;   âx = dy·vW;   hvW = dyᵀ·ĝx
// (db does not depend on x or W, so vb reaches only ĝy.)
#pragma once

#include "model/train/graph_node.h"

namespace flashtick {

class LinearNode : public Node {
 public:
  LinearNode(Activation* x, Activation* y, int weight, int bias)
      : x_(x), y_(y), w_(weight), b_(bias) {}
  NodeIo Io() const override { return {{x_}, {y_}, {x_}}; }
  absl::Status Forward(Workspace& ws, GraphParams& p) override;
  absl::Status Backward(Workspace& ws, GraphParams& p, Sweep s) override;
  absl::Status BackwardBackward(Workspace& ws, GraphParams& p) override;

 private:
  Activation *x_, *y_;
  int w_, b_;
};

}  // namespace flashtick
