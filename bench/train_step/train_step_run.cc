// train_step benchmark measurement (bench/train_step/train_step_run.h).
#include "bench/train_step/train_step_run.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/safetensors.h"
#include "trainer/train_rng.h"

namespace flashtick::bench {

TrainBatch SyntheticBatch(int64_t B, int64_t T, int F, uint64_t seed) {
  TrainRng rng(seed);
  TrainBatch b{B, T, std::vector<float>(B * T * F), std::vector<int32_t>(B * T)};
  for (int64_t i = 0; i < B; ++i) {
    double run = 0.0;
    for (int64_t t = 0; t < T; ++t) {
      for (int f = 0; f < F; ++f) b.ticks[(i * T + t) * F + f] = static_cast<float>(rng.Normal());
      run = 0.8 * run + b.ticks[(i * T + t) * F];
      b.labels[i * T + t] = t < 8 ? -1 : (run > 0.7 ? 2 : (run < -0.7 ? 0 : 1));
    }
  }
  return b;
}

namespace {
double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

absl::StatusOr<StepTiming> RunTrainSteps(const RunSpec& spec, Backend* backend) {
  const int64_t before = backend->Memory().used_bytes;
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> t, Trainer::Create(spec.model, spec.options, backend));
  StepTiming r;
  r.model_bytes = backend->Memory().used_bytes - before;
  const TrainBatch batch = SyntheticBatch(spec.B, spec.N, spec.model.features, spec.data_seed);
  std::vector<double> plain, refresh;
  int64_t peak = 0;
  StepProfiler profiler(backend);
  if (spec.profile_nodes) t->set_profiler(&profiler);
  for (int s = 0; s < spec.warmup + spec.steps; ++s) {
    ASSIGN_OR_RETURN(StepStats st, t->TrainStep(batch.ticks, batch.labels, spec.B, spec.N));
    r.losses.push_back(st.loss);
    if (s < spec.warmup) continue;
    if (spec.profile_nodes)
      (st.hessian_refreshed ? r.profile_refresh : r.profile_plain).Add(profiler.last());
    (st.hessian_refreshed ? refresh : plain).push_back(st.step_seconds * 1e3);
    peak = std::max(peak, st.peak_memory_bytes);
    int64_t& kind_peak = st.hessian_refreshed ? r.peak_bytes_refresh : r.peak_bytes_plain;
    kind_peak = std::max(kind_peak, st.peak_memory_bytes);
  }
  r.ms_plain = Median(plain);
  r.ms_refresh = Median(refresh);
  r.timed_steps = spec.steps;
  const double k = static_cast<double>(spec.options.hessian_interval);
  r.ms = spec.options.optimizer == OptimizerKind::kSophiaH && !refresh.empty() && !plain.empty()
             ? (r.ms_refresh + (k - 1) * r.ms_plain) / k
             : Median(plain.empty() ? refresh : plain);
  r.peak_bytes = peak;
  return r;
}

absl::Status DumpData(const RunSpec& spec, int batches, const std::string& dir, Backend* backend) {
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> t, Trainer::Create(spec.model, spec.options, backend));
  RETURN_IF_ERROR(t->ExportModel(dir));
  Safetensors st;
  for (int i = 0; i < batches; ++i) {
    const TrainBatch b = SyntheticBatch(spec.B, spec.N, spec.model.features, spec.data_seed + i);
    RETURN_IF_ERROR(st.Add(absl::StrCat("ticks.", i), DType::kF32,
                           {spec.B, spec.N, spec.model.features}, b.ticks.data()));
    RETURN_IF_ERROR(
        st.Add(absl::StrCat("labels.", i), DType::kI32, {spec.B, spec.N}, b.labels.data()));
  }
  return st.WriteFile(dir + "/data.safetensors");
}

double TrainStepFlops(const ModelConfig& c, int64_t B, int64_t N) {
  const double C = c.width, R = c.mlp_ratio * C, D = c.head_dim();
  const double qkv = (c.heads + 2.0 * c.kv_heads) * D;
  const double dense_params =
      c.layers * (C * qkv + C * C + 2 * C * R) + c.features * C + c.classes * C;
  const double tokens = static_cast<double>(B) * N;
  const double attn_fwd = 4.0 * B * c.heads * static_cast<double>(N) * N * D / 2;  // causal
  return 6.0 * dense_params * tokens + c.layers * 3.5 * attn_fwd;
}

}  // namespace flashtick::bench
