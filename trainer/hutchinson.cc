// Hutchinson's Hessian-diagonal estimate with Rademacher probes (trainer/hutchinson.h).
#include "trainer/hutchinson.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

absl::Status EstimateHessianDiagonal(TransformerGraph& graph, ParamStore& store, TrainRng& rng,
                                     int samples, double scale, const TensorView& hhat,
                                     GradientAllReducer* reducer) {
  if (samples < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("Hutchinson samples must be >= 1, got ", samples));
  const ParamLayout& layout = store.layout();
  std::vector<double> u(layout.total(), 0.0), sum(layout.total(), 0.0);
  for (int s = 0; s < samples; ++s) {
    RETURN_IF_ERROR(graph.Mark("host", "probe"));
    // 64 signs per draw: the probe of a 30M-parameter model costs ~0.5M draws, not 30M.
    uint64_t bits = 0;
    int left = 0;
    for (const FlatParam& p : layout.params()) {  // gaps stay 0
      for (int64_t j = 0; j < p.numel; ++j) {
        if (left == 0) bits = rng.Next(), left = 64;
        u[p.offset + j] = (bits & 1) ? 1.0 : -1.0;
        bits >>= 1;
        --left;
      }
    }
    RETURN_IF_ERROR(store.FromHost(store.probe(), u));
    if (reducer != nullptr) {
      RETURN_IF_ERROR(reducer->Begin(store.hv()));
      graph.set_param_ready([reducer](int i) { return reducer->ParamReady(i); });
    }
    const absl::Status hvp = graph.HessianVectorProduct();
    graph.set_param_ready(nullptr);
    RETURN_IF_ERROR(hvp);
    if (reducer != nullptr) {
      RETURN_IF_ERROR(graph.Mark("host", "all_reduce"));
      RETURN_IF_ERROR(reducer->Finish());
    }
    RETURN_IF_ERROR(graph.Mark("host", "hv_product"));
    ASSIGN_OR_RETURN(std::vector<double> hu, store.ToHost(store.hv()));
    for (size_t i = 0; i < u.size(); ++i) sum[i] += u[i] * hu[i];
  }
  const double k = scale / samples;
  for (double& x : sum) x *= k;
  return store.FromHost(hhat, sum);
}

}  // namespace flashtick
