// CPU reference attention forward (Op::kAttentionFwd): O = softmax(scale·Q Kᵀ) V and the
// row log-sum-exp L, per kernels/ops/attention.h. FlashAttention-2, Alg. 1: each task
// owns one block of kBlockQ query rows of one (b, h) and streams key blocks through an
// online softmax (running max m_i, running sum l_i, unnormalised accumulator), so
// extra memory is O(kBlockQ·D) per thread and a 23,400-step day never needs a T×T
// buffer. Accumulation in fp64 for both f32 and f64 tensors.
// Causal: key j is visible to query i iff j ≤ i; key blocks past the query block's
// last row are never visited.
#include <cmath>
#include <limits>
#include <vector>

#include "common/status_macros.h"
#include "kernels/cpu/attention_tiles.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/ops/attention.h"

namespace flashtick::cpu {
namespace {

using attn::kBlockK;
using attn::kBlockQ;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

template <typename T>
void FwdImpl(const AttentionShape& s, bool causal, double scale, In in, Out out,
             ThreadPool* pool) {
  const auto q = attn::Rows<const T>(in[0]);
  const auto k = attn::Rows<const T>(in[1]);
  const auto v = attn::Rows<const T>(in[2]);
  const auto o = attn::Rows<T>(out[0]);
  T* lse = out[1].as<T>();  // [B, H, T] contiguous
  const int64_t D = s.D;

  pool->ParallelFor(attn::NumQueryBlockTasks(s), 1, [&](int64_t begin, int64_t end) {
    std::vector<double> qt(kBlockQ * D), kt(kBlockK * D), vt(kBlockK * D), acc(kBlockQ * D);
    std::vector<double> st(kBlockK), m(kBlockQ), l(kBlockQ);
    for (int64_t item = begin; item < end; ++item) {
      const auto [b, h, hk, i0, nq, j_end] = attn::QueryBlockTaskAt(item, s, causal);
      attn::LoadRows(q, b, h, i0, nq, D, scale, qt.data());  // scale folded into Q once
      std::fill(m.begin(), m.end(), kNegInf);
      std::fill(l.begin(), l.end(), 0.0);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j0 = 0; j0 < j_end; j0 += kBlockK) {
        const int64_t nk = std::min(kBlockK, j_end - j0);
        attn::LoadRows(k, b, hk, j0, nk, D, 1.0, kt.data());
        attn::LoadRows(v, b, hk, j0, nk, D, 1.0, vt.data());
        for (int64_t r = 0; r < nq; ++r) {
          const int64_t i = i0 + r;
          double row_max = kNegInf;
          for (int64_t c = 0; c < nk; ++c) {
            const bool masked = causal && j0 + c > i;
            st[c] = masked ? kNegInf : attn::Dot(&qt[r * D], &kt[c * D], D);  // S_ij
            row_max = std::max(row_max, st[c]);
          }
          const double m_new = std::max(m[r], row_max);
          // -inf guard: every key seen so far is masked, so this tile adds nothing;
          // skipping also avoids exp(-inf − (−inf)) = NaN.
          if (m_new == kNegInf) continue;
          const double alpha = std::exp(m[r] - m_new);  // rescale old state; exp(−inf) = 0 at start
          l[r] *= alpha;
          double* acc_r = &acc[r * D];
          for (int64_t d = 0; d < D; ++d) acc_r[d] *= alpha;
          for (int64_t c = 0; c < nk; ++c) {
            if (st[c] == kNegInf) continue;  // masked: P_ij = 0
            const double p = std::exp(st[c] - m_new);
            l[r] += p;
            attn::Axpy(p, &vt[c * D], acc_r, D);
          }
          m[r] = m_new;
        }
      }
      for (int64_t r = 0; r < nq; ++r) {
        const int64_t i = i0 + r;
        T* lse_row = lse + (b * s.H + h) * s.T;
        // A row with no visible key (impossible for causal self-attention, where j = i is
        // always visible) is defined as O = 0, L = −inf.
        const double inv_l = l[r] > 0.0 ? 1.0 / l[r] : 0.0;
        attn::StoreRow(o, b, i, h, D, inv_l, &acc[r * D]);
        lse_row[i] = static_cast<T>(l[r] > 0.0 ? m[r] + std::log(l[r]) : kNegInf);
      }
    }
  });
}

}  // namespace

absl::Status AttentionFwd(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  AttentionShape s;
  RETURN_IF_ERROR(attn::CheckCpuAttentionQkv(Op::kAttentionFwd, in, out, &s));
  const DType dt = in[0].dtype;
  RETURN_IF_ERROR(CheckAttentionTensor("O", out[0], s.B, s.T, s.H, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionStats("L", out[1], s, AttentionStatsDType(dt)));
  const double scale = AttentionScale(desc.attention, s.D);
  if (dt == DType::kF32)
    FwdImpl<float>(s, desc.attention.causal, scale, in, out, ctx.pool);
  else
    FwdImpl<double>(s, desc.attention.causal, scale, in, out, ctx.pool);
  return absl::OkStatus();
}

}  // namespace flashtick::cpu
