// The training graph's building blocks: activations with their adjoints, the
// parameters' flat buffers, and the Node interface every layer implements.
//
// Exact Hessian-vector products by reverse over reverse (Pearlmutter 1994; the
// backward pass is itself a differentiable graph). With forward activations a, the
// first backward computes cot = ∂L/∂a and the parameter gradient. The second reverse
// seeds the parameter gradient with the probe v and runs backwards through the first
// backward: its nodes were executed in reverse order, so it visits them in forward
// order (BackwardBackward), producing
//   gcot  ĝ = cotangent of cot   (flows forward, producer → consumers)
//   acot  â = cotangent of a     (collected from every node's backward-over-backward)
//   hv    += the parameter part,
// then finishes with an ordinary backward sweep that propagates â (Sweep::kHvp). The
// result hv = ∇²L·v exactly (up to rounding). Each op's backward-over-backward is a
// kernel op (LayerNormBwdBwd, GeluBwdBwd, AttentionBwdBwd, SoftmaxCrossEntropyBwdBwd)
// or, for the bilinear ops (matmul, bias, residual add, RoPE), a few matmuls.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "trainer/workspace.h"

namespace flashtick {

// Which adjoints a backward sweep reads and writes.
enum class Sweep {
  kGrad,  // first order: cot → cot, parameter gradients into grad
  kHvp,   // last sweep of a Hessian-vector product: acot → acot, into hv
};

// An activation [M, width] (M = B·T rows) and its adjoints; gcot and acot exist only
// when the graph was built for Hessian-vector products.
struct Activation {
  TensorView value;
  Slot cot, gcot, acot;
  bool needs_grad = true;  // false for the model input (the ticks)
  Slot& Adj(Sweep s) { return s == Sweep::kGrad ? cot : acot; }
};

// Per-tensor views of the parameters (trainer/param_store.h). value and probe are
// in the dtypes the ops read (matrices in the activation dtype, vectors in
// ParamDType of it): the master buffers themselves, or compute copies of them. grad
// and hv are in the master dtype; contributions in other dtypes are cast on the way in.
struct GraphParams {
  std::vector<TensorView> value;  // the weights the forward reads
  std::vector<Slot> grad;         // ∂L/∂θ
  std::vector<TensorView> probe;  // v of ∇²L·v
  std::vector<Slot> hv;           // ∇²L·v
  Slot& Adj(int i, Sweep s) { return s == Sweep::kGrad ? grad[i] : hv[i]; }
};

// What a node touches, for the graph's memory plan (trainer/memory_plan.h): the
// forward reads `in` and writes `out`; its backward reads the values of `saved` and the
// adjoints of in and out; its backward-over-backward reads `saved`, ĝ of in and out, cot
// of out (unless told otherwise) and writes â of in (unless told otherwise).
struct NodeIo {
  std::vector<Activation*> in, out, saved;
  bool bwdbwd_reads_out_cot = true;
  bool bwdbwd_writes_in_acot = true;
};

class Node {
 public:
  virtual ~Node() = default;
  // The node's op, as profiles name it ("linear", "attention", ...).
  virtual const char* kind() const = 0;
  virtual NodeIo Io() const = 0;
  virtual absl::Status Forward(Workspace& ws, GraphParams& p) = 0;
  // Propagates the output adjoint of sweep s to the inputs and parameters.
  virtual absl::Status Backward(Workspace& ws, GraphParams& p, Sweep s) = 0;
  // The VJP of this node's kGrad backward, for the cotangents ĝ of the input cot
  // (complete: producers run first) and the probe of its parameters.
  virtual absl::Status BackwardBackward(Workspace& ws, GraphParams& p) = 0;
  // Writes this node's forward output again into `out`, from its saved input, for a
  // consumer that does not keep it (LinearNode with a recomputed input). Only cheap,
  // deterministic row-local nodes offer it (LayerNorm, GELU): the same op on the same
  // input gives the same bits, so nothing changes but the memory.
  virtual absl::Status Recompute(Workspace& ws, GraphParams& p, const TensorView& out) {
    return absl::UnimplementedError("this node's output cannot be recomputed");
  }
  // The activation Recompute reads (it must stay saved while a consumer recomputes).
  virtual Activation* recompute_input() const { return nullptr; }
};

}  // namespace flashtick
