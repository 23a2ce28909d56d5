// Softmax cross-entropy over K classes (K = 3 for the tick head: down/flat/up), per
// row, with an ignore label. Losses are per row so the caller chooses the reduction
// (the model takes the mean over labelled rows: dloss_m = 1/#labelled).
//   p = softmax(z);  loss_m = logsumexp(z_m) − z_m[y_m]      (0 where y_m = ignore)
//
// kSoftmaxCrossEntropy        in: logits, labels               out: loss
// kSoftmaxCrossEntropyBwd     (VJP with per-row cotangent dloss)
//   dlogits_m = dloss_m·(p_m − onehot(y_m))                  (0 where y_m = ignore)
//                             in: logits, labels, dloss        out: dlogits
// kSoftmaxCrossEntropyBwdBwd  (VJP of (logits, dloss) ↦ dlogits with cotangent g)
//   ∂logits_m = dloss_m·(diag(p_m) − p_m p_mᵀ)·g_m = dloss_m·p_m∘(g_m − ⟨p_m, g_m⟩)
//   ∂dloss_m  = ⟨p_m − onehot(y_m), g_m⟩                      (both 0 where ignored)
//                             in: logits, labels, dloss, g     out: ∂logits, ∂dloss
// (diag(p) − ppᵀ is the Hessian of logsumexp: the Gauss-Newton and exact Hessian of
// the loss in the logits coincide.)
//
// Layouts: logits, dlogits, g, ∂logits [..., K] views that collapse to the same M rows
// (kernels/ops/row_layout.h); labels int32 [...] with M elements, contiguous; loss,
// dloss, ∂dloss [M] contiguous (any shape with M elements). Outputs must not overlap
// inputs. Labels must be ignore_label or in [0, K): the CPU backend returns
// InvalidArgument otherwise; CUDA kernels cannot report, so they write NaN to those
// rows (the Trainer validates labels on the host before uploading them).
// dtypes: logits-shaped tensors desc.dtype; loss, dloss, ∂dloss ParamDType(desc.dtype)
// (kernels/ops/param_dtype.h); labels int32. Softmax in fp32 (CUDA) or f64 (CPU),
// stabilised by the row max.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/ops/row_layout.h"
#include "kernels/tensor.h"

namespace flashtick {

struct CrossEntropyLayout {
  int64_t M = 0, K = 0;
  RowLayout logits;  // logits
  RowLayout rows2;   // dlogits (Bwd) or g (BwdBwd)
  RowLayout rows3;   // ∂logits (BwdBwd)
};

absl::Status CheckSoftmaxCrossEntropyArgs(const OpDesc& desc, absl::Span<const TensorView> in,
                                          absl::Span<const TensorView> out,
                                          CrossEntropyLayout* layout);

}  // namespace flashtick
