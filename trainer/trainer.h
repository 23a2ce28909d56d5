// Trainer: the training engine the sweep engine and the server call. One TrainStep =
// gradient accumulation over micro-batches of whole sequences → global gradient norm →
// clipping → (Sophia-H, every k-th step: Hutchinson's Hessian-diagonal estimate by
// exact HVPs on the last micro-batch) → one optimizer update with the scheduled
// learning rate. The loss is the mean cross-entropy over the labelled steps of the
// whole batch (label −1 = ignore), so the result does not depend on the micro-batch
// size. Everything runs on the given Backend: fp32 masters (fp64 on the CPU for the
// oracle tests), activations in the compute dtype (bf16 on CUDA).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/backend.h"
#include "model/config.h"
#include "trainer/gradient_all_reducer.h"
#include "trainer/lr_schedule.h"
#include "trainer/param_store.h"
#include "trainer/train_optimizer.h"
#include "trainer/train_rng.h"
#include "trainer/transformer_graph.h"

namespace flashtick {

struct TrainerOptions {
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  OptimizerHyper hyper = OptimizerHyper::Defaults(OptimizerKind::kAdamW);
  LrSchedule lr;
  DType dtype = DType::kF32;  // master weights, gradients, optimizer state; kF64 on the CPU only
  // Activations and the weight copies the ops read. Unset: bf16 on CUDA, else `dtype`.
  std::optional<DType> compute_dtype;
  int64_t micro_batch = 0;        // sequences per micro-batch; 0 = the whole batch at once
  double max_grad_norm = 1.0;     // clip the global L2 norm to this; <= 0 disables
  int64_t hessian_interval = 10;  // Sophia-H: refresh ĥ at steps 1, k+1, 2k+1, ...
  int hutchinson_samples = 1;     // probes per refresh
  uint64_t seed = 0;              // initial weights (Transformer::InitRandom) and probes

  absl::Status Validate() const;
};

struct StepStats {
  int64_t step = 0;        // 1-based index of the update just applied
  double loss = 0.0;       // mean CE over labelled steps, before the update
  double grad_norm = 0.0;  // global L2 norm before clipping
  double lr = 0.0;
  double step_seconds = 0.0;
  int64_t peak_memory_bytes = 0;  // backend high-water mark during the step
  int64_t tokens = 0;             // B·T
  bool hessian_refreshed = false;
};

class Trainer {
 public:
  // A new model initialised from options.seed (the same weights as
  // Transformer::InitRandom(config, seed)).
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(const ModelConfig& config,
                                                         const TrainerOptions& options,
                                                         Backend* backend);

  // ticks: host fp32 [B, T, F]; labels: host int32 [B, T] in {−1, 0..classes−1}.
  // A step whose loss or gradient is not finite changes nothing and returns an error.
  absl::StatusOr<StepStats> TrainStep(absl::Span<const float> ticks,
                                      absl::Span<const int32_t> labels, int64_t B, int64_t T);
  // Mean CE over the labelled steps, no update.
  absl::StatusOr<double> EvalLoss(absl::Span<const float> ticks, absl::Span<const int32_t> labels,
                                  int64_t B, int64_t T);

  // config.json + model.safetensors (fp32) that Transformer::Load reads.
  absl::Status ExportModel(const std::string& dir) const;

  int64_t step() const { return step_; }
  const ModelConfig& config() const { return store_->config(); }
  const TrainerOptions& options() const { return options_; }
  ParamStore& params() { return *store_; }
  TrainOptimizer& optimizer() { return *optimizer_; }
  TrainRng& rng() { return rng_; }
  Backend* backend() const { return backend_; }

  // Data parallelism (research/parallel/): this trainer is one of reducer->world_size()
  // replicas with the same options and seed, and TrainStep gets this replica's share
  // of the global batch. Gradients (and Sophia-H's Hessian-vector products) are summed
  // over replicas by `reducer`, row weights are 1/(labelled rows of the global batch),
  // so every replica applies the update of the global batch and the weights stay
  // identical. The Hessian estimate covers every replica's last micro-batch. nullptr
  // (the default): one device.
  void set_all_reducer(GradientAllReducer* reducer) { reducer_ = reducer; }

  // Per-node timing of every TrainStep (trainer/step_profiler.h); the step's profile is
  // profiler->last() after it returns. nullptr (the default): off, at no cost.
  void set_profiler(StepProfiler* profiler) { profiler_ = profiler; }

 private:
  friend class TrainCheckpoint;  // restores step_ and rng_
  Trainer(const TrainerOptions& options, Backend* backend)
      : options_(options), backend_(backend), rng_(options.seed ^ 0x5EED5EED5EED5EEDULL) {}
  absl::Status CheckBatch(absl::Span<const float> ticks, absl::Span<const int32_t> labels,
                          int64_t B, int64_t T, int64_t* micro) const;
  absl::StatusOr<TransformerGraph*> Graph(int64_t micro, int64_t T);
  absl::StatusOr<double> GradNormSquared();

  TrainerOptions options_;
  Backend* backend_;
  std::unique_ptr<ParamStore> store_;
  std::unique_ptr<TrainOptimizer> optimizer_;
  std::unique_ptr<TransformerGraph> graph_;
  TensorView norm2_;
  std::shared_ptr<void> norm2_mem_;
  TrainRng rng_;
  int64_t step_ = 0;
  GradientAllReducer* reducer_ = nullptr;
  StepProfiler* profiler_ = nullptr;
};

}  // namespace flashtick
