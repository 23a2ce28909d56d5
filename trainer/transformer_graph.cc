// TransformerGraph: building the node list and running the sweeps.
#include "trainer/transformer_graph.h"

#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/param_dtype.h"
#include "model/input_encoding.h"
#include "trainer/attention_node.h"
#include "trainer/gelu_node.h"
#include "trainer/layernorm_node.h"
#include "trainer/linear_node.h"
#include "trainer/residual_node.h"

namespace flashtick {
namespace {

constexpr size_t kArenaAlign = 256;  // buffer offsets: what cuBLASLt and vectorised row kernels like

}  // namespace

absl::StatusOr<std::unique_ptr<TransformerGraph>> TransformerGraph::Create(ParamStore* store,
                                                                           int64_t B, int64_t T,
                                                                           bool hvp) {
  if (B < 1 || T < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("training batch must have B, T >= 1, got B=", B, " T=", T));
  if (T > store->config().max_context)
    return absl::InvalidArgumentError(
        absl::StrCat("T=", T, " exceeds the model's max_context ", store->config().max_context));
  if (hvp) RETURN_IF_ERROR(store->EnableHvp());
  std::unique_ptr<TransformerGraph> g(new TransformerGraph(store, B, T, hvp));
  RETURN_IF_ERROR(g->Build());
  RETURN_IF_ERROR(g->UsePlan(hvp ? GraphPlan::kHvp : GraphPlan::kGradient));
  return g;
}

int TransformerGraph::P(const std::string& name) {
  const int i = store_->layout().Find(name);
  if (i < 0 && missing_.empty()) missing_ = name;
  if (i >= 0) pending_params_.push_back(i);
  return i;
}

Node* TransformerGraph::AddNode(std::unique_ptr<Node> node) {
  nodes_.push_back(std::move(node));
  node_params_.push_back(std::move(pending_params_));
  pending_params_.clear();
  return nodes_.back().get();
}

absl::Status TransformerGraph::ReportReady(size_t node, Sweep s) {
  if (!param_ready_) return absl::OkStatus();
  GraphParams& p = store_->graph();
  for (int i : node_params_[node]) {
    if (p.Adj(i, s).written) RETURN_IF_ERROR(param_ready_(i));
  }
  return absl::OkStatus();
}

absl::StatusOr<Activation*> TransformerGraph::NewActivation(int64_t width, bool needs_grad) {
  const DType dt = store_->compute_dtype();
  const int64_t M = B_ * T_;
  auto a = std::make_unique<Activation>();
  a->needs_grad = needs_grad;
  if (!needs_grad) {  // the input: written by SetBatch, before the planned timeline starts
    ASSIGN_OR_RETURN(a->value, ws_.Allocate(dt, {M, width}));
  } else {  // placed in the arena by UsePlan
    const DeviceKind dev = store_->backend()->device();
    a->value = MakeView(nullptr, dt, dev, {M, width});
    a->cot.view = MakeView(nullptr, dt, dev, {M, width});
    if (hvp_) {
      a->gcot.view = MakeView(nullptr, dt, dev, {M, width});
      a->acot.view = MakeView(nullptr, dt, dev, {M, width});
    }
  }
  acts_.push_back(std::move(a));
  return acts_.back().get();
}

absl::Status TransformerGraph::Build() {
  const ModelConfig& c = store_->config();
  const DType dt = store_->compute_dtype();
  const int64_t M = B_ * T_, C = c.width, D = c.head_dim();
  const int64_t H = c.heads, Hkv = c.kv_heads, R = int64_t(c.mlp_ratio) * C;
  // The embedding's input is the encoded row (model/input_encoding.h: Fourier columns).
  ASSIGN_OR_RETURN(input_, NewActivation(c.input_width(), /*needs_grad=*/false));
  if (dt != DType::kF32 && dt != DType::kF64) {  // ticks arrive fp32 and are cast on the device
    ASSIGN_OR_RETURN(input32_, ws_.Allocate(DType::kF32, {M, int64_t(c.input_width())}));
  }
  ASSIGN_OR_RETURN(Activation * h, NewActivation(C));
  AddNode(std::make_unique<LinearNode>(input_, h, P("embed.weight"), P("embed.bias")));
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = absl::StrCat("blocks.", l, ".");
    ASSIGN_OR_RETURN(Activation * a, NewActivation(C));
    ASSIGN_OR_RETURN(Activation * qkv, NewActivation((H + 2 * Hkv) * D));
    ASSIGN_OR_RETURN(Activation * o, NewActivation(H * D));
    ASSIGN_OR_RETURN(Activation * proj, NewActivation(C));
    ASSIGN_OR_RETURN(Activation * h1, NewActivation(C));
    ASSIGN_OR_RETURN(Activation * b, NewActivation(C));
    ASSIGN_OR_RETURN(Activation * u, NewActivation(R));
    ASSIGN_OR_RETURN(Activation * z, NewActivation(R));
    ASSIGN_OR_RETURN(Activation * f, NewActivation(C));
    ASSIGN_OR_RETURN(Activation * h2, NewActivation(C));
    const DType st = AttentionStatsDType(dt);
    ASSIGN_OR_RETURN(TensorView lse, ws_.Allocate(st, {B_, H, T_}));
    ASSIGN_OR_RETURN(TensorView dvec, ws_.Allocate(st, {B_, H, T_}));
    // The inputs of the QKV, fc1, fc2 and head projections (LayerNorm and GELU outputs)
    // are recomputed in their backward sweeps, not kept (LinearNode, Node::Recompute).
    Node* ln1 = AddNode(std::make_unique<LayerNormNode>(h, a, P(p + "ln1.weight"),
                                                        P(p + "ln1.bias"), c.layernorm_eps));
    AddNode(std::make_unique<LinearNode>(a, qkv, P(p + "attn.qkv.weight"),
                                         P(p + "attn.qkv.bias"), ln1));
    AddNode(std::make_unique<AttentionNode>(
        qkv, o,
        AttentionDims{B_, T_, H, Hkv, D, c.rope_theta, c.layer_rotary_dims(l), c.layer_excludes_self(l)},
        lse, dvec));
    AddNode(
        std::make_unique<LinearNode>(o, proj, P(p + "attn.proj.weight"), P(p + "attn.proj.bias")));
    AddNode(std::make_unique<ResidualNode>(h, proj, h1));
    Node* ln2 = AddNode(std::make_unique<LayerNormNode>(h1, b, P(p + "ln2.weight"),
                                                        P(p + "ln2.bias"), c.layernorm_eps));
    AddNode(
        std::make_unique<LinearNode>(b, u, P(p + "mlp.fc1.weight"), P(p + "mlp.fc1.bias"), ln2));
    Node* gelu = AddNode(std::make_unique<GeluNode>(u, z));
    AddNode(
        std::make_unique<LinearNode>(z, f, P(p + "mlp.fc2.weight"), P(p + "mlp.fc2.bias"), gelu));
    AddNode(std::make_unique<ResidualNode>(h1, f, h2));
    h = h2;
  }
  ASSIGN_OR_RETURN(Activation * hf, NewActivation(C));
  Node* ln_f = AddNode(
      std::make_unique<LayerNormNode>(h, hf, P("ln_f.weight"), P("ln_f.bias"), c.layernorm_eps));
  ASSIGN_OR_RETURN(logits_, NewActivation(c.classes));
  AddNode(std::make_unique<LinearNode>(hf, logits_, P("head.weight"), P("head.bias"), ln_f));
  ASSIGN_OR_RETURN(labels_, ws_.Allocate(DType::kI32, {M}));
  ASSIGN_OR_RETURN(weights_, ws_.Allocate(ParamDType(dt), {M}));
  ASSIGN_OR_RETURN(rows_, ws_.Allocate(ParamDType(dt), {M}));
  auto loss = std::make_unique<LossNode>(logits_, labels_, weights_, rows_, kIgnoreLabel);
  loss_ = loss.get();
  AddNode(std::move(loss));
  if (!missing_.empty())
    return absl::InternalError(absl::StrCat("training graph: no parameter '", missing_, "'"));
  return absl::OkStatus();
}

std::vector<PlannedBuffer> TransformerGraph::Lifetimes(GraphPlan plan) const {
  std::vector<PlannedBuffer> bufs;
  std::unordered_map<const TensorView*, size_t> index;
  auto add = [&](TensorView* v) {
    index[v] = bufs.size();
    bufs.push_back(PlannedBuffer{v});
  };
  for (const auto& a : acts_) {
    if (!a->needs_grad) continue;  // the input, allocated on its own
    add(&a->value);
    add(&a->cot.view);
    if (hvp_) add(&a->gcot.view), add(&a->acot.view);
  }
  auto use = [&](const TensorView& v, int64_t tick) { bufs[index.at(&v)].Use(tick); };
  auto planned = [](const Activation* a) { return a->needs_grad; };
  // Ticks: forward node i at i, backward at 2n−1−i, backward-over-backward at 2n+i, the
  // HVP's backward at 4n−1−i. kHvp keeps the values and cots the backward-over-backward
  // reads to the end (4n), so the next HVP finds them; kOneHvp lets them go after their
  // last read.
  const int64_t n = static_cast<int64_t>(nodes_.size());
  const int64_t end = 4 * n;
  for (int64_t i = 0; i < n; ++i) {
    const NodeIo io = nodes_[i]->Io();
    const int64_t fwd = i, bwd = 2 * n - 1 - i, bb = 2 * n + i, hb = 4 * n - 1 - i;
    for (const auto* list : {&io.in, &io.out})
      for (Activation* a : *list)
        if (planned(a)) use(a->value, fwd);
    for (Activation* a : io.out) use(a->cot.view, bwd);
    for (Activation* a : io.in)
      if (planned(a)) use(a->cot.view, bwd);
    for (Activation* a : io.saved)
      if (planned(a)) use(a->value, bwd);
    if (plan == GraphPlan::kGradient) continue;
    const bool again = plan == GraphPlan::kHvp;
    for (Activation* a : io.saved)
      if (planned(a)) use(a->value, bb), use(a->value, again ? end : hb);
    if (io.bwdbwd_reads_out_cot)
      for (Activation* a : io.out) use(a->cot.view, bb), use(a->cot.view, again ? end : bb);
    for (Activation* a : io.out) use(a->gcot.view, bb), use(a->acot.view, hb);
    for (Activation* a : io.in) {
      if (!planned(a)) continue;
      use(a->gcot.view, bb);
      if (io.bwdbwd_writes_in_acot) use(a->acot.view, bb);
      use(a->acot.view, hb);
    }
  }
  return bufs;
}

const TransformerGraph::ArenaLayout& TransformerGraph::Layout(GraphPlan plan) {
  auto it = layouts_.find(plan);
  if (it != layouts_.end()) return it->second;
  std::vector<PlannedBuffer> bufs = Lifetimes(plan);
  ArenaLayout layout;
  layout.bytes = PlanArena(bufs, kArenaAlign);
  layout.placement.reserve(bufs.size());
  for (const PlannedBuffer& b : bufs)  // a buffer no node of this plan reads stays null
    layout.placement.emplace_back(b.view, b.used() ? static_cast<int64_t>(b.offset) : -1);
  return layouts_.emplace(plan, std::move(layout)).first->second;
}

absl::Status TransformerGraph::UsePlan(GraphPlan plan) {
  if (plan != GraphPlan::kGradient && !hvp_)
    return absl::FailedPreconditionError("this training graph was built without HVP support");
  if (arena_ != nullptr && plan == plan_) return absl::OkStatus();
  const ArenaLayout& layout = Layout(plan);
  arena_.reset();  // free first: the peak is the new arena, not old + new
  ws_.ReleaseScratch();
  arena_bytes_ = layout.bytes;
  ASSIGN_OR_RETURN(arena_, store_->backend()->Allocate(std::max<size_t>(arena_bytes_, kArenaAlign)));
  for (const auto& [view, offset] : layout.placement)  // unused in this plan: null
    view->data = offset >= 0 ? static_cast<char*>(arena_.get()) + offset : nullptr;
  plan_ = plan;
  hvp_ready_ = false;
  return absl::OkStatus();
}

absl::Status TransformerGraph::SetBatch(absl::Span<const float> ticks,
                                        absl::Span<const int32_t> labels, double row_weight) {
  RETURN_IF_ERROR(Mark("host", "set_batch"));
  const ModelConfig& c = store_->config();
  const int64_t M = B_ * T_;
  if (static_cast<int64_t>(ticks.size()) != M * c.features ||
      static_cast<int64_t>(labels.size()) != M)
    return absl::InvalidArgumentError(absl::StrCat(
        "micro-batch must be ticks [B=", B_, ", T=", T_, ", F=", c.features,
        "] and labels [B, T]; got ", ticks.size(), " tick values and ", labels.size(), " labels"));
  host_weights_.assign(M, 0.0);
  for (int64_t m = 0; m < M; ++m) {
    const int32_t y = labels[m];
    if (y == kIgnoreLabel) continue;
    if (y < 0 || y >= c.classes)
      return absl::InvalidArgumentError(absl::StrCat("label ", y, " at row ", m, " (b=", m / T_,
                                                     ", t=", m % T_, ") is not -1 or in [0, ",
                                                     c.classes, ")"));
    host_weights_[m] = row_weight;
  }
  Backend* be = store_->backend();
  const DType dt = store_->compute_dtype();
  const float* rows = InputRows(c, ticks.data(), M, &encoded_inputs_);  // input_encoding.h
  if (dt == DType::kF32) {
    RETURN_IF_ERROR(be->Copy(input_->value.data, input_->value.device, rows, DeviceKind::kCpu,
                             input_->value.bytes()));
  } else if (dt != DType::kF64) {
    RETURN_IF_ERROR(
        be->Copy(input32_.data, input32_.device, rows, DeviceKind::kCpu, input32_.bytes()));
    RETURN_IF_ERROR(ws_.Cast(input32_, input_->value));
  } else {
    std::vector<double> x(rows, rows + M * c.input_width());
    RETURN_IF_ERROR(be->Copy(input_->value.data, input_->value.device, x.data(), DeviceKind::kCpu,
                             input_->value.bytes()));
  }
  RETURN_IF_ERROR(
      be->Copy(labels_.data, labels_.device, labels.data(), DeviceKind::kCpu, labels_.bytes()));
  if (ParamDType(dt) == DType::kF64)
    return be->Copy(weights_.data, weights_.device, host_weights_.data(), DeviceKind::kCpu,
                    weights_.bytes());
  std::vector<float> w(host_weights_.begin(), host_weights_.end());
  return be->Copy(weights_.data, weights_.device, w.data(), DeviceKind::kCpu, weights_.bytes());
}

absl::StatusOr<double> TransformerGraph::Forward() {
  GraphParams& p = store_->graph();
  hvp_ready_ = false;
  for (auto& n : nodes_) {
    RETURN_IF_ERROR(Mark("forward", n->kind()));
    RETURN_IF_ERROR(n->Forward(ws_, p));
  }
  RETURN_IF_ERROR(Mark("host", "loss_readback"));
  const int64_t M = B_ * T_;
  std::vector<double> rows(M);
  Backend* be = store_->backend();
  if (rows_.dtype == DType::kF64) {
    RETURN_IF_ERROR(
        be->Copy(rows.data(), DeviceKind::kCpu, rows_.data, rows_.device, rows_.bytes()));
  } else {
    std::vector<float> r(M);
    RETURN_IF_ERROR(be->Copy(r.data(), DeviceKind::kCpu, rows_.data, rows_.device, rows_.bytes()));
    rows.assign(r.begin(), r.end());
  }
  double loss = 0.0;  // in row order: deterministic
  for (int64_t m = 0; m < M; ++m) loss += host_weights_[m] * rows[m];
  return loss;
}

absl::Status TransformerGraph::Backward() {
  GraphParams& p = store_->graph();
  for (auto& a : acts_) a->cot.written = false;
  for (size_t k = nodes_.size(); k-- > 0;) {
    RETURN_IF_ERROR(Mark("backward", nodes_[k]->kind()));
    RETURN_IF_ERROR(nodes_[k]->Backward(ws_, p, Sweep::kGrad));
    RETURN_IF_ERROR(ReportReady(k, Sweep::kGrad));
  }
  hvp_ready_ = plan_ != GraphPlan::kGradient;
  return absl::OkStatus();
}

absl::Status TransformerGraph::HessianVectorProduct() {
  if (!hvp_)
    return absl::FailedPreconditionError("this training graph was built without HVP support");
  if (!store_->hvp_enabled())
    return absl::FailedPreconditionError("HessianVectorProduct: the store's probe is released");
  if (!hvp_ready_)
    return absl::FailedPreconditionError(
        "HessianVectorProduct needs Forward and Backward under an HVP plan first (kOneHvp: "
        "once per Backward)");
  if (plan_ == GraphPlan::kOneHvp) hvp_ready_ = false;
  GraphParams& p = store_->graph();
  for (auto& a : acts_) a->gcot.written = a->acot.written = false;
  RETURN_IF_ERROR(Mark("hvp_bwd_bwd", "reset_hv"));
  store_->ResetHv();
  for (auto& n : nodes_) {
    RETURN_IF_ERROR(Mark("hvp_bwd_bwd", n->kind()));
    RETURN_IF_ERROR(n->BackwardBackward(ws_, p));
  }
  for (size_t k = nodes_.size(); k-- > 0;) {
    RETURN_IF_ERROR(Mark("hvp_backward", nodes_[k]->kind()));
    RETURN_IF_ERROR(nodes_[k]->Backward(ws_, p, Sweep::kHvp));
    RETURN_IF_ERROR(ReportReady(k, Sweep::kHvp));
  }
  RETURN_IF_ERROR(Mark("hvp_backward", "complete_hv"));
  return store_->CompleteHv();
}

}  // namespace flashtick
