// CPU reference of the softmax cross-entropy ops (kernels/ops/cross_entropy.h), per
// row in f64, softmax stabilised by the row max:
//   loss_m    = logsumexp(z_m) − z_m[y_m]
//   dlogits_m = dloss_m·(p_m − onehot(y_m))
//   ∂logits_m = dloss_m·p_m∘(g_m − ⟨p_m, g_m⟩);   ∂dloss_m = ⟨p_m − onehot(y_m), g_m⟩
// Rows labelled ignore_label give zeros. Labels are checked before anything is written.
#include "kernels/ops/cross_entropy.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"

namespace flashtick::cpu {
namespace {

// p = softmax(z) in f64; returns logsumexp(z).
template <typename T>
double SoftmaxRow(const T* z, int64_t K, double* p) {
  double mx = -INFINITY;
  for (int64_t k = 0; k < K; ++k) mx = std::max(mx, static_cast<double>(z[k]));
  double sum = 0.0;
  for (int64_t k = 0; k < K; ++k) sum += (p[k] = std::exp(static_cast<double>(z[k]) - mx));
  for (int64_t k = 0; k < K; ++k) p[k] /= sum;
  return mx + std::log(sum);
}

absl::Status CheckLabels(const OpDesc& desc, const int32_t* labels, int64_t M, int64_t K) {
  const int32_t ignore = desc.cross_entropy.ignore_label;
  for (int64_t m = 0; m < M; ++m) {
    const int32_t y = labels[m];
    if (y != ignore && (y < 0 || y >= K))
      return absl::InvalidArgumentError(absl::StrCat(OpName(desc.op), ": label ", y, " at row ", m,
                                                     " is outside [0, ", K,
                                                     ") and is not the ignore label ", ignore));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Run(const OpDesc& desc, In in, Out out, CpuContext& ctx, const CrossEntropyLayout& l) {
  const int32_t* labels = in[1].as<int32_t>();
  RETURN_IF_ERROR(CheckLabels(desc, labels, l.M, l.K));
  const int32_t ignore = desc.cross_entropy.ignore_label;
  const int64_t K = l.K;
  ctx.pool->ParallelFor(l.M, RowGrain(K, 1 << 12), [&](int64_t m0, int64_t m1) {
    std::vector<double> p(K);
    for (int64_t m = m0; m < m1; ++m) {
      const T* z = in[0].as<T>() + m * l.logits.row_stride;
      const int32_t y = labels[m];
      const bool skip = y == ignore;
      const double lse = skip ? 0.0 : SoftmaxRow(z, K, p.data());
      switch (desc.op) {
        case Op::kSoftmaxCrossEntropy:
          out[0].as<T>()[m] = static_cast<T>(skip ? 0.0 : lse - static_cast<double>(z[y]));
          break;
        case Op::kSoftmaxCrossEntropyBwd: {
          T* dz = out[0].as<T>() + m * l.rows2.row_stride;
          const double w = static_cast<double>(in[2].as<T>()[m]);
          for (int64_t k = 0; k < K; ++k)
            dz[k] = static_cast<T>(skip ? 0.0 : w * (p[k] - (k == y ? 1.0 : 0.0)));
          break;
        }
        default: {
          const T* g = in[3].as<T>() + m * l.rows2.row_stride;
          T* dz = out[0].as<T>() + m * l.rows3.row_stride;
          const double w = static_cast<double>(in[2].as<T>()[m]);
          double pg = 0.0;
          for (int64_t k = 0; k < K; ++k) pg += skip ? 0.0 : p[k] * static_cast<double>(g[k]);
          for (int64_t k = 0; k < K; ++k)
            dz[k] = static_cast<T>(skip ? 0.0 : w * p[k] * (static_cast<double>(g[k]) - pg));
          out[1].as<T>()[m] = static_cast<T>(skip ? 0.0 : pg - static_cast<double>(g[y]));
          break;
        }
      }
    }
  });
  return absl::OkStatus();
}

absl::Status Dispatch(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  CrossEntropyLayout l;
  RETURN_IF_ERROR(CheckSoftmaxCrossEntropyArgs(desc, in, out, &l));
  return DispatchFloat(desc.dtype, OpName(desc.op), [&](auto zero) -> absl::Status {
    return Run<decltype(zero)>(desc, in, out, ctx, l);
  });
}

}  // namespace

absl::Status SoftmaxCrossEntropy(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  return Dispatch(desc, in, out, ctx);
}
absl::Status SoftmaxCrossEntropyBwd(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  return Dispatch(desc, in, out, ctx);
}
absl::Status SoftmaxCrossEntropyBwdBwd(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  return Dispatch(desc, in, out, ctx);
}

}  // namespace flashtick::cpu
