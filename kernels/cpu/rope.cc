// CPU rotary position embedding (kernels/ops/rope.h). For each step t the R/2 angles
// a_i = (offset + t)·θ^(−2i/R) are formed in f64 and their cos/sin computed once,
// then applied to every (b, h) row at that step; dims R..D−1 are copied. Threaded
// over t. The optional position input (host memory on this backend) is read here, when
// the op runs. Each pair is read before it is written, so Y may be X.
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ops/rope.h"

namespace flashtick::cpu {

absl::Status Rope(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  RopeShape s;
  RETURN_IF_ERROR(CheckRopeArgs(desc, in, out, &s));
  int64_t offset = desc.rope.position_offset;
  if (in.size() == 2) {
    const int32_t p = in[1].as<int32_t>()[0];
    if (p < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("rope: the position input holds ", p, "; positions are >= 0"));
    offset += p;
  }
  return DispatchFloat(desc.dtype, "rope", [&](auto tag) {
    using T = decltype(tag);
    const TensorView &X = in[0], &Y = out[0];
    const int64_t half = s.R / 2;
    // θ^(−2i/R), shared by every position.
    std::vector<double> inv_freq(half);
    for (int64_t i = 0; i < half; ++i)
      inv_freq[i] = std::pow(static_cast<double>(desc.rope.theta),
                             -2.0 * static_cast<double>(i) / static_cast<double>(s.R));
    const double sign = desc.rope.inverse ? -1.0 : 1.0;
    const int64_t grain = std::max<int64_t>(1, (1 << 12) / std::max<int64_t>(1, s.B * s.H * s.D));
    ctx.pool->ParallelFor(s.T, grain, [&](int64_t t0, int64_t t1) {
      std::vector<double> cs(half), sn(half);
      for (int64_t t = t0; t < t1; ++t) {
        const double pos = static_cast<double>(offset + t);
        for (int64_t i = 0; i < half; ++i) {
          const double a = pos * inv_freq[i];
          cs[i] = std::cos(a);
          sn[i] = sign * std::sin(a);
        }
        for (int64_t b = 0; b < s.B; ++b) {
          for (int64_t h = 0; h < s.H; ++h) {
            const T* xr = X.as<T>() + b * X.stride(0) + t * X.stride(1) + h * X.stride(2);
            T* yr = Y.as<T>() + b * Y.stride(0) + t * Y.stride(1) + h * Y.stride(2);
            for (int64_t i = 0; i < half; ++i) {
              const double x0 = static_cast<double>(xr[2 * i]);
              const double x1 = static_cast<double>(xr[2 * i + 1]);
              yr[2 * i] = static_cast<T>(x0 * cs[i] - x1 * sn[i]);
              yr[2 * i + 1] = static_cast<T>(x0 * sn[i] + x1 * cs[i]);
            }
            if (yr != xr)
              for (int64_t d = s.R; d < s.D; ++d) yr[d] = xr[d];
          }
        }
      }
    });
    return absl::OkStatus();
  });
}

}  // namespace flashtick::cpu
