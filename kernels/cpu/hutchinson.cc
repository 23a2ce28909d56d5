// CPU references of kRademacher and kProbeProduct (kernels/ops/hutchinson.h).
// Rademacher draws element i from Philox4x32-10 at counter ⌊i/128⌋ (kernels/common/
// philox.h), one generator call per 128 elements, threaded over blocks of them.
#include "common/status_macros.h"
#include "kernels/common/philox.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ops/hutchinson.h"

namespace flashtick::cpu {

absl::Status Rademacher(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  int64_t n = 0;
  RETURN_IF_ERROR(CheckRademacherArgs(desc, in, out, &n));
  const uint64_t seed = desc.probe.seed;
  return DispatchFloat(desc.dtype, "rademacher", [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    T* u = out[0].as<T>();
    const int64_t blocks = (n + 127) / 128;
    ctx.pool->ParallelFor(blocks, 256, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const Philox4x32 r = RademacherBlock(seed, static_cast<uint64_t>(b));
        const int64_t end = std::min<int64_t>(n, (b + 1) * 128);
        for (int64_t i = b * 128; i < end; ++i) u[i] = RademacherBit(r, i) ? T(1) : T(-1);
      }
    });
    return absl::OkStatus();
  });
}

absl::Status ProbeProduct(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  int64_t n = 0;
  RETURN_IF_ERROR(CheckProbeProductArgs(desc, in, out, &n));
  return DispatchFloat(desc.dtype, "probe_product", [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    const T alpha = static_cast<T>(desc.probe.alpha), beta = static_cast<T>(desc.probe.beta);
    const bool reads_a = desc.probe.beta != 0.0;
    const T* u = in[0].as<T>();
    const T* hv = in[1].as<T>();
    const T* a = reads_a ? in[2].as<T>() : nullptr;
    T* y = out[0].as<T>();
    ctx.pool->ParallelFor(n, 1 << 14, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const T p = u[i] * hv[i];
        y[i] = alpha * (reads_a ? beta * a[i] + p : p);
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
