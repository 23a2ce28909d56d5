// Hutchinson's Hessian-diagonal estimate with Rademacher probes (trainer/hutchinson.h),
// on the device: per sample one kRademacher into the store's probe, one HVP, one
// kProbeProduct into the running sum (or, for the last sample, into hhat).
#include "trainer/hutchinson.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/op_desc.h"

namespace flashtick {

absl::Status EstimateHessianDiagonal(TransformerGraph& graph, ParamStore& store, TrainRng& rng,
                                     int samples, double scale, const TensorView& hhat,
                                     GradientAllReducer* reducer) {
  if (samples < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("Hutchinson samples must be >= 1, got ", samples));
  if (!store.hvp_enabled())
    return absl::FailedPreconditionError("Hutchinson estimate: ParamStore::EnableHvp first");
  Backend* be = store.backend();
  // Σ_{s < S−1} u_s∘(∇²L·u_s): the product buffer is overwritten by the next HVP, so
  // earlier samples are summed apart (only when S > 1).
  std::shared_ptr<void> sum_mem;
  TensorView sum;
  if (samples > 1) {
    sum = store.hv();
    ASSIGN_OR_RETURN(sum_mem, be->Allocate(sum.bytes()));
    sum.data = sum_mem.get();
  }
  for (int s = 0; s < samples; ++s) {
    RETURN_IF_ERROR(graph.Mark("hutchinson", "probe"));
    OpDesc draw;
    draw.op = Op::kRademacher;
    draw.dtype = store.dtype();
    draw.probe.seed = rng.Next();  // one key per probe: same stream on every replica
    const TensorView probe = store.probe();
    RETURN_IF_ERROR(be->Run(draw, {}, {&probe, 1}));
    RETURN_IF_ERROR(store.SyncProbe());
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
    RETURN_IF_ERROR(graph.Mark("hutchinson", "probe_product"));
    const bool last = s + 1 == samples;
    OpDesc product;
    product.op = Op::kProbeProduct;
    product.dtype = store.dtype();
    product.probe.alpha = last ? scale / samples : 1.0;
    product.probe.beta = s == 0 ? 0.0 : 1.0;
    const TensorView in[3] = {probe, store.hv(), s == 0 ? TensorView{} : sum};
    const TensorView out = last ? hhat : sum;
    RETURN_IF_ERROR(be->Run(product, in, {&out, 1}));
  }
  return absl::OkStatus();
}

}  // namespace flashtick
