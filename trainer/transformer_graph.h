// TransformerGraph: the tick transformer of model/transformer.h as a training graph
// for one micro-batch shape [B, T]: forward with every activation kept, the backward
// (parameter gradients into the ParamStore) and the exact Hessian-vector product
// ∇²L·v by reverse over reverse (trainer/graph_node.h). Node order:
//   embed → L × [ln1 → qkv → attention(RoPE) → proj → +res → ln2 → fc1 → gelu → fc2 → +res]
//   → ln_f → head → cross-entropy (ignore label −1)
// All ops run on the ParamStore's backend in its compute dtype (activations) with the
// parameters' dtypes for gradients (trainer/param_store.h).
// Memory: the activations and their adjoints live in one arena laid out by a static plan
// (trainer/memory_plan.h) over the timeline forward (node i at tick i), backward,
// backward-over-backward, HVP backward; a buffer's bytes are reused once its last
// reader has run. The plan depends on what the step will run (GraphPlan), so a step
// without a Hessian-vector product does not pay for one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "trainer/graph_node.h"
#include "trainer/loss_node.h"
#include "trainer/memory_plan.h"
#include "trainer/param_store.h"
#include "trainer/step_profiler.h"
#include "trainer/workspace.h"

namespace flashtick {

// What the next steps run, which decides how long buffers must live.
enum class GraphPlan {
  kGradient,  // Forward and Backward: a value lives until its backward, a cot until used
  kHvp,       // also HessianVectorProduct, as often as wanted after one Backward
  kOneHvp,    // also one HessianVectorProduct: cots die during it (Hutchinson, 1 probe)
};

class TransformerGraph {
 public:
  static constexpr int32_t kIgnoreLabel = -1;

  // hvp: the graph can compute HVPs (the store gets its probe/product buffers); it starts
  // with plan kHvp, else kGradient.
  static absl::StatusOr<std::unique_ptr<TransformerGraph>> Create(ParamStore* store, int64_t B,
                                                                  int64_t T, bool hvp);

  // Lays the arena out for `plan` (a no-op when it already is); call before SetBatch.
  // Activations from before are lost; an HVP plan needs a graph made with hvp.
  absl::Status UsePlan(GraphPlan plan);
  GraphPlan plan() const { return plan_; }
  // Bytes of the activation arena under the current plan.
  int64_t arena_bytes() const { return static_cast<int64_t>(arena_bytes_); }

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
  // not reported. Data parallelism (trainer/gradient_all_reducer.h) launches its
  // bucketed all-reduces from here; empty (the default) costs nothing.
  using ParamReadyFn = std::function<absl::Status(int param)>;
  void set_param_ready(ParamReadyFn fn) { param_ready_ = std::move(fn); }

  // Per-node timing (trainer/step_profiler.h): every node's forward, backward and HVP
  // sweeps, and the graph's host work, open a segment of `profiler`. nullptr (the
  // default): one pointer test per node, nothing recorded.
  void set_profiler(StepProfiler* profiler) { profiler_ = profiler; }
  StepProfiler* profiler() const { return profiler_; }
  // Starts a profile segment when profiling; free otherwise.
  absl::Status Mark(const char* phase, const char* kind) {
    return MarkIfProfiling(profiler_, phase, kind);
  }

  int64_t B() const { return B_; }
  int64_t T() const { return T_; }
  const TensorView& logits() const { return logits_->value; }
  Workspace& workspace() { return ws_; }

 private:
  TransformerGraph(ParamStore* store, int64_t B, int64_t T, bool hvp)
      : store_(store), ws_(store->backend()), B_(B), T_(T), hvp_(hvp) {}
  absl::StatusOr<Activation*> NewActivation(int64_t width, bool needs_grad = true);
  // Lifetimes of the planned buffers on the timeline of `plan`.
  std::vector<PlannedBuffer> Lifetimes(GraphPlan plan) const;
  // Where each planned buffer sits in the arena of `plan`: computed once per plan.
  // A Sophia-H refresh step and the plain step after it switch plans, and the layout
  // depends only on the graph and the plan, so replanning (Lifetimes, PlanArena: host
  // work over every buffer) at each switch would only repeat itself.
  struct ArenaLayout {
    size_t bytes = 0;
    std::vector<std::pair<TensorView*, int64_t>> placement;  // offset; −1: unused here
  };
  const ArenaLayout& Layout(GraphPlan plan);
  absl::Status Build();
  int P(const std::string& name);  // parameter index; records the first missing name
  // Appends a node; the parameters P() returned since the last AddNode are its own.
  Node* AddNode(std::unique_ptr<Node> node);
  absl::Status ReportReady(size_t node, Sweep s);

  ParamStore* store_;
  Workspace ws_;
  int64_t B_, T_;
  bool hvp_;
  GraphPlan plan_ = GraphPlan::kGradient;
  bool hvp_ready_ = false;  // Backward ran under an HVP plan and no kOneHvp HVP since
  std::shared_ptr<void> arena_;
  size_t arena_bytes_ = 0;
  std::map<GraphPlan, ArenaLayout> layouts_;
  std::vector<std::unique_ptr<Activation>> acts_;  // acts_[0] is the input (not planned)
  std::vector<std::unique_ptr<Node>> nodes_;  // forward order; the loss node last
  std::vector<std::vector<int>> node_params_;  // per node, the parameters it owns
  std::vector<int> pending_params_;
  ParamReadyFn param_ready_;
  StepProfiler* profiler_ = nullptr;
  Activation *input_ = nullptr, *logits_ = nullptr;
  LossNode* loss_ = nullptr;
  TensorView labels_, weights_, rows_, input32_;
  std::vector<double> host_weights_;
  std::vector<float> encoded_inputs_;  // host rows of encoded inputs, reused by every batch
  std::string missing_;
};

}  // namespace flashtick
