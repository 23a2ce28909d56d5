// Trainer: micro-batch accumulation, clipping, Hutchinson refreshes, optimizer steps.
#include "trainer/trainer.h"

#include <chrono>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/file_io.h"
#include "model/safetensors.h"
#include "trainer/hutchinson.h"

namespace flashtick {

absl::Status TrainerOptions::Validate() const {
  RETURN_IF_ERROR(hyper.Validate());
  RETURN_IF_ERROR(lr.Validate());
  if (dtype != DType::kF32 && dtype != DType::kF64)
    return absl::InvalidArgumentError("trainer dtype must be fp32 (or fp64 on the CPU)");
  if (micro_batch < 0) return absl::InvalidArgumentError("micro_batch must be >= 0");
  if (!std::isfinite(max_grad_norm))
    return absl::InvalidArgumentError("max_grad_norm must be finite");
  if (hessian_interval < 1) return absl::InvalidArgumentError("hessian_interval must be >= 1");
  if (hutchinson_samples < 1) return absl::InvalidArgumentError("hutchinson_samples must be >= 1");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(const ModelConfig& config,
                                                         const TrainerOptions& options,
                                                         Backend* backend) {
  RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<Trainer> t(new Trainer(options, backend));
  DType compute = options.dtype;
  if (options.compute_dtype.has_value()) {
    compute = *options.compute_dtype;
  } else if (backend->device() == DeviceKind::kCuda) {
    compute = DType::kBF16;
  }
  t->options_.compute_dtype = compute;
  ASSIGN_OR_RETURN(t->store_, ParamStore::Create(config, options.dtype, compute, backend));
  RETURN_IF_ERROR(t->store_->InitRandom(options.seed));
  ASSIGN_OR_RETURN(t->optimizer_,
                   TrainOptimizer::Create(options.optimizer, options.hyper, t->store_.get()));
  t->norm2_ = MakeView(nullptr, options.dtype, backend->device(), {1, 1});
  ASSIGN_OR_RETURN(t->norm2_mem_, backend->Allocate(t->norm2_.bytes()));
  t->norm2_.data = t->norm2_mem_.get();
  return t;
}

absl::Status Trainer::CheckBatch(absl::Span<const float> ticks, absl::Span<const int32_t> labels,
                                 int64_t B, int64_t T, int64_t* micro) const {
  const ModelConfig& c = config();
  if (B < 1 || T < 1)
    return absl::InvalidArgumentError(absl::StrCat("batch B=", B, " T=", T, ": both must be >= 1"));
  if (static_cast<int64_t>(ticks.size()) != B * T * c.features ||
      static_cast<int64_t>(labels.size()) != B * T)
    return absl::InvalidArgumentError(absl::StrCat(
        "ticks must be [B=", B, ", T=", T, ", F=", c.features, "] = ", B * T * c.features,
        " values and labels [B, T] = ", B * T, "; got ", ticks.size(), " and ", labels.size()));
  *micro = options_.micro_batch == 0 ? B : options_.micro_batch;
  if (B % *micro != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("batch size ", B, " is not a multiple of the micro-batch ", *micro));
  return absl::OkStatus();
}

absl::StatusOr<TransformerGraph*> Trainer::Graph(int64_t micro, int64_t T) {
  if (!graph_ || graph_->B() != micro || graph_->T() != T) {
    graph_.reset();  // free the old activations before allocating the new ones
    ASSIGN_OR_RETURN(graph_,
                     TransformerGraph::Create(store_.get(), micro, T,
                                              options_.optimizer == OptimizerKind::kSophiaH));
  }
  return graph_.get();
}

absl::StatusOr<double> Trainer::GradNormSquared() {
  // ‖g‖² = g·gᵀ as a [1, n]×[n, 1] matmul over the flat gradient (gaps are zero).
  const TensorView& g = store_->grads();
  const TensorView row = MakeView(g.data, g.dtype, g.device, {1, g.numel()});
  OpDesc d;
  d.op = Op::kMatmul;
  d.dtype = g.dtype;
  d.matmul.trans_b = true;
  std::vector<TensorView> in = {row, row}, out = {norm2_};
  RETURN_IF_ERROR(backend_->Run(d, in, out));
  if (g.dtype == DType::kF64) {
    double v = 0;
    RETURN_IF_ERROR(backend_->Copy(&v, DeviceKind::kCpu, norm2_.data, norm2_.device, sizeof v));
    return v;
  }
  float v = 0;
  RETURN_IF_ERROR(backend_->Copy(&v, DeviceKind::kCpu, norm2_.data, norm2_.device, sizeof v));
  return static_cast<double>(v);
}

absl::StatusOr<StepStats> Trainer::TrainStep(absl::Span<const float> ticks,
                                             absl::Span<const int32_t> labels, int64_t B,
                                             int64_t T) {
  int64_t micro = 0;
  RETURN_IF_ERROR(CheckBatch(ticks, labels, B, T, &micro));
  int64_t labelled = 0, last_labelled = 0;
  for (int64_t i = 0; i < B * T; ++i) {
    labelled += labels[i] >= 0;
    if (i >= (B - micro) * T) last_labelled += labels[i] >= 0;
  }
  if (reducer_ != nullptr) {  // the global batch's counts (exact in double below 2^53)
    double counts[2] = {static_cast<double>(labelled), static_cast<double>(last_labelled)};
    RETURN_IF_ERROR(reducer_->SumHost(absl::MakeSpan(counts)));
    labelled = static_cast<int64_t>(counts[0]);
    last_labelled = static_cast<int64_t>(counts[1]);
  }
  if (labelled == 0)
    return absl::InvalidArgumentError("the batch has no labelled steps (every label is -1)");
  const auto t0 = std::chrono::steady_clock::now();
  if (profiler_ != nullptr) profiler_->Begin();
  auto mark = [this](const char* phase, const char* kind) {
    return MarkIfProfiling(profiler_, phase, kind);
  };
  RETURN_IF_ERROR(mark("host", "step_setup"));
  ASSIGN_OR_RETURN(TransformerGraph * graph, Graph(micro, T));
  graph->set_profiler(profiler_);
  const int64_t step = step_ + 1;
  const bool refresh = options_.optimizer == OptimizerKind::kSophiaH &&
                       (step - 1) % options_.hessian_interval == 0 && last_labelled > 0;
  // Only a refresh step keeps what the HVP reads (the cots) past the backward.
  RETURN_IF_ERROR(graph->UsePlan(!refresh                             ? GraphPlan::kGradient
                                 : options_.hutchinson_samples == 1 ? GraphPlan::kOneHvp
                                                                    : GraphPlan::kHvp));
  // From here: a plan switch has freed the previous step's arena before allocating this
  // one, so the step's peak is its own (the graph's first allocation stays counted).
  backend_->ResetPeakMemory();
  const int64_t F = config().features;
  const double w = 1.0 / static_cast<double>(labelled);
  store_->ResetGrads();
  double loss = 0.0;
  for (int64_t b0 = 0; b0 < B; b0 += micro) {
    RETURN_IF_ERROR(graph->SetBatch(ticks.subspan(b0 * T * F, micro * T * F),
                                    labels.subspan(b0 * T, micro * T), w));
    ASSIGN_OR_RETURN(double l, graph->Forward());
    loss += l;
    const bool last = b0 + micro >= B;
    if (reducer_ != nullptr && last) {  // the gradient is final tensor by tensor from here
      RETURN_IF_ERROR(mark("host", "all_reduce"));
      RETURN_IF_ERROR(reducer_->Begin(store_->grads()));
      graph->set_param_ready([this](int i) { return reducer_->ParamReady(i); });
    }
    const absl::Status backward = graph->Backward();
    graph->set_param_ready(nullptr);
    RETURN_IF_ERROR(backward);
  }
  RETURN_IF_ERROR(mark("backward", "complete_grads"));
  RETURN_IF_ERROR(store_->CompleteGrads());
  if (reducer_ != nullptr) {
    RETURN_IF_ERROR(mark("host", "all_reduce"));
    RETURN_IF_ERROR(reducer_->Finish());
    RETURN_IF_ERROR(reducer_->SumHost(absl::MakeSpan(&loss, 1)));
  }
  RETURN_IF_ERROR(mark("optimizer", "grad_norm"));
  ASSIGN_OR_RETURN(double norm2, GradNormSquared());
  const double norm = std::sqrt(norm2);
  if (!std::isfinite(loss) || !std::isfinite(norm))
    return absl::InternalError(absl::StrCat(
        "step ", step, ": loss ", loss, ", gradient norm ", norm,
        " is not finite; the update was skipped and the weights are unchanged (lower the "
        "learning rate, or check the ticks for NaN/inf)"));
  // torch.nn.utils.clip_grad_norm_: scale by max_norm/(norm + 1e-6) when above max_norm.
  double scale = 1.0;
  if (options_.max_grad_norm > 0 && norm > options_.max_grad_norm)
    scale = options_.max_grad_norm / (norm + 1e-6);
  StepStats st;
  st.step = step;
  st.loss = loss;
  st.grad_norm = norm;
  st.lr = options_.lr.At(step);
  st.tokens = B * T;
  const TensorView* hhat = nullptr;
  TensorView hhat_view;  // ĥ goes into the product buffer: Hutchinson has read its last product
  if (refresh) {
    // The HVP is of the last micro-batch's share of the batch loss (weights 1/labelled);
    // rescale to that micro-batch's own mean loss.
    const double rescale = static_cast<double>(labelled) / static_cast<double>(last_labelled);
    RETURN_IF_ERROR(mark("host", "enable_hvp"));
    RETURN_IF_ERROR(store_->EnableHvp());
    hhat_view = store_->hv();
    RETURN_IF_ERROR(EstimateHessianDiagonal(*graph, *store_, rng_, options_.hutchinson_samples,
                                            rescale, hhat_view, reducer_));
    hhat = &hhat_view;
    st.hessian_refreshed = true;
  }
  RETURN_IF_ERROR(mark("optimizer", "update"));
  RETURN_IF_ERROR(optimizer_->Step(step, st.lr, scale, hhat));
  RETURN_IF_ERROR(mark("host", "release_hvp"));
  store_->ReleaseHvp();  // until the next refresh (a no-op for AdamW)
  RETURN_IF_ERROR(mark("optimizer", "sync_compute"));
  RETURN_IF_ERROR(store_->SyncCompute());
  if (profiler_ != nullptr) RETURN_IF_ERROR(profiler_->End().status());  // one sync
  RETURN_IF_ERROR(backend_->Synchronize());
  step_ = step;
  st.step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.peak_memory_bytes = backend_->Memory().peak_bytes;
  return st;
}

absl::StatusOr<double> Trainer::EvalLoss(absl::Span<const float> ticks,
                                         absl::Span<const int32_t> labels, int64_t B, int64_t T) {
  int64_t micro = 0;
  RETURN_IF_ERROR(CheckBatch(ticks, labels, B, T, &micro));
  int64_t labelled = 0;
  for (int32_t y : labels) labelled += y >= 0;
  if (labelled == 0) return absl::InvalidArgumentError("the batch has no labelled steps");
  ASSIGN_OR_RETURN(TransformerGraph * graph, Graph(micro, T));
  const int64_t F = config().features;
  double loss = 0.0;
  for (int64_t b0 = 0; b0 < B; b0 += micro) {
    RETURN_IF_ERROR(graph->SetBatch(ticks.subspan(b0 * T * F, micro * T * F),
                                    labels.subspan(b0 * T, micro * T), 1.0 / labelled));
    ASSIGN_OR_RETURN(double l, graph->Forward());
    loss += l;
  }
  return loss;
}

absl::Status Trainer::ExportModel(const std::string& dir) const {
  RETURN_IF_ERROR(MakeDirs(dir));
  ASSIGN_OR_RETURN(std::vector<double> host, store_->ToHost(store_->values()));
  Safetensors st;
  st.metadata()["format"] = "pt";  // as Transformer::Save writes it
  st.metadata()["flashtick_config"] = config().ToJson();
  for (const FlatParam& p : store_->layout().params()) {
    std::vector<float> f(host.begin() + p.offset, host.begin() + p.offset + p.numel);
    RETURN_IF_ERROR(st.Add(p.spec.name, DType::kF32, p.spec.shape, f.data()));
  }
  RETURN_IF_ERROR(st.WriteFile(dir + "/model.safetensors"));
  return WriteFileAtomic(dir + "/config.json", config().ToJson() + "\n");
}

}  // namespace flashtick
