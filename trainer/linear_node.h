// LinearNode: y = x·Wᵀ + b, x [M, K], W [N, K], b [N] (embedding, QKV, projections,
// MLP, head). Backward (cotangent dy): dx = dy·W, dW = dyᵀ·x, db = Σ_rows dy.
// The backward is bilinear in (x, W) × dy, so its VJP with cotangents (ĝx, vW, vb)
// of (dx, dW, db) is three matmuls and a bias:
//   ĝy = ĝx·Wᵀ + x·vWᵀ + vb;   âx = dy·vW;   hvW = dyᵀ·ĝx
// (db does not depend on x or W, so vb reaches only ĝy.)
// With a recompute source (the LayerNorm or GELU that produced x), x is not kept after
// the forward: the backward and backward-over-backward recompute it into workspace
// scratch 3 (Node::Recompute), so only the source's input stays saved.
#pragma once

#include "trainer/graph_node.h"

namespace flashtick {

class LinearNode : public Node {
 public:
  static constexpr int kRecomputeScratch = 3;  // free in every LinearNode sweep

  LinearNode(Activation* x, Activation* y, int weight, int bias, Node* x_source = nullptr)
      : x_(x), y_(y), w_(weight), b_(bias), x_source_(x_source) {}
  const char* kind() const override { return "linear"; }
  NodeIo Io() const override {
    return {{x_}, {y_}, {x_source_ != nullptr ? x_source_->recompute_input() : x_}};
  }
  absl::Status Forward(Workspace& ws, GraphParams& p) override;
  absl::Status Backward(Workspace& ws, GraphParams& p, Sweep s) override;
  absl::Status BackwardBackward(Workspace& ws, GraphParams& p) override;

 private:
  // x for the backward sweeps: the saved value, or recomputed into scratch.
  absl::StatusOr<TensorView> Input(Workspace& ws, GraphParams& p) const;

  Activation *x_, *y_;
  int w_, b_;
  Node* x_source_;
};

}  // namespace flashtick
