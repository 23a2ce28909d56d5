// MatmulNaive: the textbook triple loop, C_mn = alpha·Σ_k op(A)_mk·op(B)_kn + beta·C_mn
// (+ b_n with attrs.bias, added after C is rounded, as kAddBias would: matmul.h; then
// GELU with attrs.gelu, after another rounding, as kGelu would),
// accumulated in f64 over ascending k. The specification the blocked Matmul
// (kernels/cpu/matmul.cc) is tested against.
#include "common/status_macros.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/cpu/naive_ops.h"
#include "kernels/ops/gelu_bwd.h"
#include "kernels/ops/matmul.h"

namespace flashtick::cpu {

absl::Status MatmulNaive(const OpDesc& desc, absl::Span<const TensorView> in,
                         absl::Span<const TensorView> out) {
  MatmulShape s;
  RETURN_IF_ERROR(CheckMatmulArgs(desc, in, out, &s));
  return DispatchFloat(desc.dtype, "matmul", [&](auto tag) {
    using T = decltype(tag);
    const TensorView &A = in[0], &B = in[1], &C = out[0];
    const bool ta = desc.matmul.trans_a, tb = desc.matmul.trans_b;
    const double alpha = desc.matmul.alpha, beta = desc.matmul.beta;
    const T* bias = desc.matmul.bias ? in[2].as<T>() : nullptr;
    auto a = [&](int64_t m, int64_t k) {
      return static_cast<double>(ta ? A.as<T>()[k * A.stride(0) + m] : A.as<T>()[m * A.stride(0) + k]);
    };
    auto b = [&](int64_t k, int64_t n) {
      return static_cast<double>(tb ? B.as<T>()[n * B.stride(0) + k] : B.as<T>()[k * B.stride(0) + n]);
    };
    for (int64_t m = 0; m < s.M; ++m) {
      for (int64_t n = 0; n < s.N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < s.K; ++k) acc += a(m, k) * b(k, n);
        T& c = C.as<T>()[m * C.stride(0) + n];
        double v = beta == 0.0 ? alpha * acc : alpha * acc + beta * static_cast<double>(c);
        if (bias != nullptr)
          v = static_cast<double>(static_cast<T>(v)) + static_cast<double>(bias[n]);
        if (desc.matmul.gelu) v = GeluTanh(static_cast<double>(static_cast<T>(v)));
        c = static_cast<T>(v);
      }
    }
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
