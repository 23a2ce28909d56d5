// CPU Cast between fp32, fp64, bf16 and fp16 (kernels/ops/elementwise.h). Each
// element goes through f64 (exact for every source dtype) and is rounded once to
// the destination: hardware round-to-nearest-even for f64 -> f32, and the
// round-to-odd-then-RNE conversions of kernels/common/half.h for 16-bit targets.
#include <cstdint>

#include "common/status_macros.h"
#include "kernels/common/half.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ops/elementwise.h"

namespace flashtick::cpu {
namespace {

// Storage type, exact widening to f64, and rounding from f64 for each dtype.
template <DType D> struct Elem;
template <> struct Elem<DType::kF32> {
  using T = float;
  static double Load(T v) { return v; }
  static T Store(double d) { return static_cast<float>(d); }
};
template <> struct Elem<DType::kF64> {
  using T = double;
  static double Load(T v) { return v; }
  static T Store(double d) { return d; }
};
template <> struct Elem<DType::kBF16> {
  using T = uint16_t;
  static double Load(T v) { return Bf16BitsToFloat(v); }
  static T Store(double d) { return DoubleToBf16Bits(d); }
};
template <> struct Elem<DType::kF16> {
  using T = uint16_t;
  static double Load(T v) { return HalfBitsToFloat(v); }
  static T Store(double d) { return DoubleToHalfBits(d); }
};

template <DType S, DType D>
void CastRows(const TensorView& x, const TensorView& y, const RowLayout& rx, const RowLayout& ry,
              ThreadPool& pool) {
  using TS = typename Elem<S>::T;
  using TD = typename Elem<D>::T;
  const TS* src = x.as<TS>();
  TD* dst = y.as<TD>();
  pool.ParallelFor(rx.rows, RowGrain(rx.cols), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const TS* s = src + m * rx.row_stride;
      TD* d = dst + m * ry.row_stride;
      for (int64_t n = 0; n < rx.cols; ++n) d[n] = Elem<D>::Store(Elem<S>::Load(s[n]));
    }
  });
}

template <DType S>
absl::Status CastFrom(const TensorView& x, const TensorView& y, const RowLayout* rows,
                      ThreadPool& pool) {
  switch (y.dtype) {
    case DType::kF32: CastRows<S, DType::kF32>(x, y, rows[0], rows[1], pool); break;
    case DType::kF64: CastRows<S, DType::kF64>(x, y, rows[0], rows[1], pool); break;
    case DType::kBF16: CastRows<S, DType::kBF16>(x, y, rows[0], rows[1], pool); break;
    case DType::kF16: CastRows<S, DType::kF16>(x, y, rows[0], rows[1], pool); break;
    default: return absl::InvalidArgumentError("cast: unsupported destination dtype");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Cast(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  RowLayout rows[2];
  RETURN_IF_ERROR(CheckCastArgs(desc, in, out, rows));
  const TensorView &x = in[0], &y = out[0];
  if (SameView(x, y)) return absl::OkStatus();  // same dtype, in place: nothing to do
  switch (x.dtype) {
    case DType::kF32: return CastFrom<DType::kF32>(x, y, rows, *ctx.pool);
    case DType::kF64: return CastFrom<DType::kF64>(x, y, rows, *ctx.pool);
    case DType::kBF16: return CastFrom<DType::kBF16>(x, y, rows, *ctx.pool);
    case DType::kF16: return CastFrom<DType::kF16>(x, y, rows, *ctx.pool);
    default: return absl::InvalidArgumentError("cast: unsupported source dtype");
  }
}

}  // namespace flashtick::cpu
