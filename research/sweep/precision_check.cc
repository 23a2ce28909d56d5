// RunPrecisionCheck (see precision_check.h).
#include "research/sweep/precision_check.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/transformer.h"
#include "research/labels/deeplob.h"
#include "research/stats/classification.h"

namespace flashtick {
namespace {

constexpr double kProbFloor = 1e-30;  // log of a float probability that underflowed to 0

// Centered logits of one row of probabilities.
void Logits(const float* p, double* z) {
  double mean = 0;
  for (int c = 0; c < kNumClasses; ++c) {
    z[c] = std::log(std::max<double>(p[c], kProbFloor));
    mean += z[c];
  }
  mean /= kNumClasses;
  for (int c = 0; c < kNumClasses; ++c) z[c] -= mean;
}

}  // namespace

nlohmann::json PrecisionToJson(const PrecisionReport& p) {
  return {{"ran", p.ran},
          {"note", p.note},
          {"arm_id", p.arm_id},
          {"date", p.date},
          {"windows", p.windows},
          {"positions", p.positions},
          {"fast_path", p.fast_path},
          {"fast_dtype", p.fast_dtype},
          {"reference_path", p.reference_path},
          {"reference_dtype", p.reference_dtype},
          {"max_rel_logit_error", p.max_rel_logit_error},
          {"max_abs_prob_error", p.max_abs_prob_error},
          {"early", p.early},
          {"flips", p.flips},
          {"flip_share", p.flip_share}};
}

absl::StatusOr<PrecisionReport> RunPrecisionCheck(const std::string& model_dir, Backend* backend,
                                                  const std::vector<float>& features,
                                                  std::vector<EvalWindow> windows,
                                                  int64_t context, int64_t batch,
                                                  int max_windows, int reference_threads,
                                                  const std::function<bool()>& stop) {
  PrecisionReport r;
  if (windows.size() > static_cast<size_t>(max_windows)) windows.resize(max_windows);
  if (windows.empty()) {
    r.note = "no labelled window on the sample day";
    return r;
  }
  BackendOptions reference_options;
  reference_options.threads = reference_threads;
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> cpu, CreateBackend("cpu", reference_options));
  ASSIGN_OR_RETURN(std::unique_ptr<Transformer> fast, Transformer::Load(model_dir, backend));
  ModelOptions f64;
  f64.compute_dtype = DType::kF64;
  ASSIGN_OR_RETURN(std::unique_ptr<Transformer> ref, Transformer::Load(model_dir, cpu.get(), f64));
  r.fast_path = fast->kernel_path();
  r.fast_dtype = DTypeName(fast->compute_dtype());
  r.reference_path = ref->kernel_path();
  r.reference_dtype = DTypeName(ref->compute_dtype());
  const bool cuda = backend->device() == DeviceKind::kCuda;
  // A GPU kernel: ours (flash_cuda_*), cuDNN's (cudnn_sdpa_*), or auto choosing between
  // them (docs/kernels/cudnn.md); anything else is a silent fallback.
  const bool gpu_path = absl::StartsWith(r.fast_path, "flash_cuda") ||
                        absl::StartsWith(r.fast_path, "cudnn_sdpa") ||
                        absl::StartsWith(r.fast_path, "attention_auto(flash_cuda");
  if (cuda && !gpu_path) {
    return absl::FailedPreconditionError(absl::StrCat(
        "precision check: the CUDA backend ran attention on '", r.fast_path,
        "', not a flash_cuda or cudnn_sdpa kernel (a silent fallback)"));
  }
  ASSIGN_OR_RETURN(std::vector<float> pf,
                   RunWindows(fast.get(), features, windows, context, batch, stop));
  ASSIGN_OR_RETURN(std::vector<float> pr,
                   RunWindows(ref.get(), features, windows, context, 1, stop));
  double max_dz = 0, max_z = 0;
  for (size_t w = 0; w < windows.size(); ++w) {
    for (int64_t row = context - windows[w].scored; row < context; ++row) {
      const size_t at = (w * context + row) * kNumClasses;
      double zf[kNumClasses], zr[kNumClasses], df[kNumClasses], dr[kNumClasses];
      Logits(&pf[at], zf);
      Logits(&pr[at], zr);
      for (int c = 0; c < kNumClasses; ++c) {
        max_dz = std::max(max_dz, std::fabs(zf[c] - zr[c]));
        max_z = std::max(max_z, std::fabs(zr[c]));
        r.max_abs_prob_error =
            std::max(r.max_abs_prob_error, std::fabs(static_cast<double>(pf[at + c]) - pr[at + c]));
        df[c] = pf[at + c];
        dr[c] = pr[at + c];
      }
      r.flips += PredictClass(df) != PredictClass(dr);
      ++r.positions;
    }
  }
  r.ran = true;
  r.windows = static_cast<int64_t>(windows.size());
  r.max_rel_logit_error = max_z > 0 ? max_dz / max_z : max_dz;
  r.flip_share = r.positions > 0 ? static_cast<double>(r.flips) / r.positions : 0.0;
  r.note = cuda ? absl::StrCat("bf16 Flash kernels (", r.fast_path, ") vs the float64 CPU reference")
                : absl::StrCat("CPU backend: float32 (", r.fast_path,
                               ") vs float64 — no bf16 Flash path runs on the CPU, so this "
                               "bounds float32 rounding only, not the GPU kernels");
  return r;
}

}  // namespace flashtick
