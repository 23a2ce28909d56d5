// TransformerGraph: the tick transformer of model/transformer.h as a training graph
// for one micro-batch shape [B, T]: forward with every activation kept, the backward
// (parameter gradients into the ParamStore) and the exact Hessian-vector product
// ∇²L·v by reverse over reverse (model/train/graph_node.h). Node order:
//   embed → L × [ln1 → qkv → attention(RoPE) → proj → +res → ln2 → fc1 → gelu → fc2 → +res]
//   → ln_f → head → cross-entropy (ignore label −1)
// All ops run on the ParamStore's backend in its compute dtype (activations) with the
// parameters' dtypes for gradients (model/train/param_store.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/train/graph_node.h"
#include "model/train/loss_node.h"
#include "model/train/param_store.h"
#include "model/train/workspace.h"

namespace flashtick {

class TransformerGraph {
 public:
  static constexpr int32_t kIgnoreLabel = -1;

  // hvp: also allocate the second-order adjoints (and the store's probe/product buffers).
  static absl::StatusOr<std::unique_ptr<TransformerGraph>> Create(ParamStore* store, int64_t B,
                                                                  int64_t T, bool hvp);

  // One micro-batch: ticks host fp32 [B, T, F], labels host int32 [B, T] in
  // {−1, 0..classes−1}; every labelled row gets loss weight row_weight.
  absl::Status SetBatch(absl::Span<const float> ticks, absl::Span<const int32_t> labels,
                        double row_weight);
  // Σ_m w_m·CE_m of this micro-batch.
  absl::StatusOr<double> Forward();
  // Adds this micro-batch's gradient into the store's gradient slots (call
  // store->ResetGrads() first to start a new sum).
  absl::Status Backward();
  // store->hv() = ∇²L·store->probe() for this micro-batch's loss, after Forward and
  // Backward (which it needs: the second reverse runs through the stored backward).
  absl::Status HessianVectorProduct();

  // Called during Backward (gradient slots) and the last sweep of
  // HessianVectorProduct (product slots) for each parameter tensor as soon as the node
  // owning it has run: its slot is final for the sweep. Parameters nothing wrote are
  // not reported. Data parallelism (model/train/gradient_all_reducer.h) launches its
  // bucketed all-reduces from here; empty (the default) costs nothing.
  using ParamReadyFn = std::function<absl::Status(int param)>;
  void set_param_ready(ParamReadyFn fn) { param_ready_ = std::move(fn); }

  int64_t B() const { return B_; }
  int64_t T() const { return T_; }
  const TensorView& logits() const { return logits_->value; }
  Workspace& workspace() { return ws_; }

 private:
  TransformerGraph(ParamStore* store, int64_t B, int64_t T, bool hvp)
      : store_(store), ws_(store->backend()), B_(B), T_(T), hvp_(hvp) {}
  absl::StatusOr<Activation*> NewActivation(int64_t width, bool needs_grad = true);
  absl::Status Build();
  int P(const std::string& name);  // parameter index; records the first missing name
  // Appends a node; the parameters P() returned since the last AddNode are its own.
  void AddNode(std::unique_ptr<Node> node);
  absl::Status ReportReady(size_t node, Sweep s);

  ParamStore* store_;
  Workspace ws_;
  int64_t B_, T_;
  bool hvp_;
  std::vector<std::unique_ptr<Activation>> acts_;
  std::vector<std::unique_ptr<Node>> nodes_;  // forward order; the loss node last
  std::vector<std::vector<int>> node_params_;  // per node, the parameters it owns
  std::vector<int> pending_params_;
  ParamReadyFn param_ready_;
  Activation *input_ = nullptr, *logits_ = nullptr;
  LossNode* loss_ = nullptr;
  TensorView labels_, weights_, rows_, input32_;
  std::vector<double> host_weights_;
  std::string missing_;
};

}  // namespace flashtick
