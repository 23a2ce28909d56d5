// Shared pieces of the CPU attention reference (forward, backward, decode): a strided
// [B, T, H, D] row accessor, tile loads into contiguous fp64 buffers, the tile
// sizes, the tasks of the query-block passes, and the argument checks. Every CPU attention op accumulates in fp64, so the f64 path is the oracle
// and the f32 path differs from it only by input/output rounding.
// Tiles follow FlashAttention-2 (Alg. 1/2): a block of kBlockQ query rows meets a
// block of kBlockK key rows at a time, so no T×T buffer ever exists.
#pragma once

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/status_macros.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick::cpu::attn {

// 32×64 tiles: the fp64 Q, K, V, S tiles of one task (≈ 32·D + 2·64·D + 32·64 doubles)
// stay in L1/L2 for D ≤ 128, and 32 query rows keep causal load balance fine-grained.
inline constexpr int64_t kBlockQ = 32;
inline constexpr int64_t kBlockK = 64;

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Row pointer into a [B, T, H, D] view whose last dim is contiguous.
template <typename T>
struct RowView {
  T* data = nullptr;
  int64_t sb = 0, st = 0, sh = 0;
  T* Row(int64_t b, int64_t t, int64_t h) const { return data + b * sb + t * st + h * sh; }
};

template <typename T>
RowView<T> Rows(const TensorView& v) {
  return RowView<T>{static_cast<T*>(v.data), v.stride(0), v.stride(1), v.stride(2)};
}

// dst[r][0..D) = factor · src(b, t0 + r, h, 0..D) for r < n, in fp64.
template <typename T>
void LoadRows(const RowView<const T>& src, int64_t b, int64_t h, int64_t t0, int64_t n, int64_t D,
              double factor, double* dst) {
  for (int64_t r = 0; r < n; ++r) {
    const T* row = src.Row(b, t0 + r, h);
    for (int64_t d = 0; d < D; ++d) dst[r * D + d] = factor * static_cast<double>(row[d]);
  }
}

template <typename T>
void StoreRow(const RowView<T>& dst, int64_t b, int64_t t, int64_t h, int64_t D, double factor,
              const double* src) {
  T* row = dst.Row(b, t, h);
  for (int64_t d = 0; d < D; ++d) row[d] = static_cast<T>(factor * src[d]);
}

// Four independent partial sums: the compiler may vectorise them (a single running sum
// is a serial dependency it must not reorder without -ffast-math); ~2.5× faster here.
inline double Dot(const double* a, const double* b, int64_t n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int64_t d = 0;
  for (; d + 4 <= n; d += 4) {
    s0 += a[d] * b[d];
    s1 += a[d + 1] * b[d + 1];
    s2 += a[d + 2] * b[d + 2];
    s3 += a[d + 3] * b[d + 3];
  }
  for (; d < n; ++d) s0 += a[d] * b[d];
  return (s0 + s1) + (s2 + s3);
}

// y += alpha · x
inline void Axpy(double alpha, const double* x, double* y, int64_t n) {
  for (int64_t d = 0; d < n; ++d) y[d] += alpha * x[d];
}

// One task of a pass parallel over (b, query head, query block) (the forward, the
// backward's dQ): query rows [i0, i0 + nq) of head h, which reads key/value head hk,
// against keys [0, key_end) (under causal masking, keys past the block's last row
// are masked, so key_end = i0 + nq). Items hand out the last query block first:
// under causal masking it sees the most keys, and claiming long tasks first
// balances the pool.
struct QueryBlockTask {
  int64_t b, h, hk, i0, nq, key_end;
};

inline int64_t NumQueryBlockTasks(const AttentionShape& s) {
  return s.B * s.H * CeilDiv(s.T, kBlockQ);
}

inline QueryBlockTask QueryBlockTaskAt(int64_t item, const AttentionShape& s, bool causal) {
  const int64_t nqb = CeilDiv(s.T, kBlockQ);
  const int64_t qb = nqb - 1 - item % nqb, bh = item / nqb;
  QueryBlockTask t;
  t.b = bh / s.H;
  t.h = bh % s.H;
  t.hk = t.h / (s.H / s.Hkv);
  t.i0 = qb * kBlockQ;
  t.nq = std::min(kBlockQ, s.T - t.i0);
  t.key_end = causal ? t.i0 + t.nq : s.T;
  return t;
}

// The reference runs in fp32 or fp64 only.
inline absl::Status CheckCpuAttentionDType(Op op, DType dt) {
  if (dt != DType::kF32 && dt != DType::kF64)
    return absl::UnimplementedError(
        absl::StrCat("cpu_reference: ", OpName(op), " runs in fp32 or fp64"));
  return absl::OkStatus();
}

// The checks attention_fwd and attention_bwd start with: the input/output counts,
// the Q, K, V shapes (into *s), and a dtype the reference runs in.
inline absl::Status CheckCpuAttentionQkv(Op op, absl::Span<const TensorView> in,
                                         absl::Span<const TensorView> out, AttentionShape* s) {
  RETURN_IF_ERROR(CheckAttentionArity(op, in.size(), out.size()));
  RETURN_IF_ERROR(CheckAttentionArgs(in[0], in[1], in[2], s));
  return CheckCpuAttentionDType(op, in[0].dtype);
}

}  // namespace flashtick::cpu::attn
