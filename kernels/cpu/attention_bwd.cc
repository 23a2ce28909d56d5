// CPU reference attention backward (Op::kAttentionBwd), FlashAttention-2 Alg. 2 with
// recomputation: P is rebuilt tile by tile from the stored log-sum-exp L, never stored.
//   D_i = Σ_d dO_id O_id;  P_ij = exp(S_ij − L_i);  dP = dO Vᵀ;  dS = P∘(dP − D)
//   dV = Pᵀ dO;  dK = scale·dSᵀ Q;  dQ = scale·dS K
// Three passes, no shared accumulators (the same split as the CUDA kernels):
//   1. D per query row (written to the Dvec output, reused by backward-over-backward);
//   2. per (b, kv head, key block): dK, dV summed over every query head of the GQA
//      group and every query block that sees the key block;
//   3. per (b, head, query block): dQ over every visible key block.
// Extra memory is O(tile·D) per thread; fp64 accumulation for f32 and f64 tensors.
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
struct BwdArgs {
  AttentionShape s;
  bool causal;
  double scale;
  attn::RowView<const T> q, k, v, o, dout;
  attn::RowView<T> dq, dk, dv;
  const T* lse;   // [B, H, T]
  T* dvec;        // [B, H, T], the Dvec output
  double* d64;    // [B, H, T], D in fp64: passes 2 and 3 use it unrounded, so an f32
                  // run differs from f64 only by input/output rounding
};

// P_ij and dS_ij of one (query block, key block) tile, recomputed from L and D.
// qt holds scale·Q rows, dot holds dO rows; p and ds are [kBlockQ][kBlockK].
template <typename T>
void TilePds(const BwdArgs<T>& a, int64_t b, int64_t h, int64_t i0, int64_t nq, int64_t j0,
             int64_t nk, const double* qt, const double* dot, const double* kt, const double* vt,
             double* p, double* ds) {
  const int64_t D = a.s.D;
  const T* lse = a.lse + (b * a.s.H + h) * a.s.T;
  const double* dvec = a.d64 + (b * a.s.H + h) * a.s.T;
  for (int64_t r = 0; r < nq; ++r) {
    const int64_t i = i0 + r;
    const double l_i = static_cast<double>(lse[i]), d_i = dvec[i];
    for (int64_t c = 0; c < nk; ++c) {
      const bool masked = a.causal && j0 + c > i;
      // -inf guard: a row with no visible key has L = −inf; exp(S − L) would be +inf.
      if (masked || l_i == kNegInf) {
        p[r * kBlockK + c] = ds[r * kBlockK + c] = 0.0;
        continue;
      }
      const double pij = std::exp(attn::Dot(&qt[r * D], &kt[c * D], D) - l_i);  // P_ij
      const double dpij = attn::Dot(&dot[r * D], &vt[c * D], D);                 // dP_ij
      p[r * kBlockK + c] = pij;
      ds[r * kBlockK + c] = pij * (dpij - d_i);  // dS = P∘(dP − D)
    }
  }
}

// Pass 1: D_i = dO_i · O_i.
template <typename T>
void PassD(const BwdArgs<T>& a, ThreadPool* pool) {
  const auto& s = a.s;
  pool->ParallelFor(s.B * s.H * s.T, 256, [&](int64_t begin, int64_t end) {
    for (int64_t idx = begin; idx < end; ++idx) {
      const int64_t i = idx % s.T, bh = idx / s.T, b = bh / s.H, h = bh % s.H;
      const T* o = a.o.Row(b, i, h);
      const T* dout = a.dout.Row(b, i, h);
      double d = 0.0;
      for (int64_t e = 0; e < s.D; ++e) d += static_cast<double>(dout[e]) * static_cast<double>(o[e]);
      a.d64[idx] = d;  // idx = (b·H + h)·T + i
      a.dvec[idx] = static_cast<T>(d);
    }
  });
}

// Pass 2: dK, dV per (b, kv head, key block); columns resident, query blocks streamed.
template <typename T>
void PassDkDv(const BwdArgs<T>& a, ThreadPool* pool) {
  const auto& s = a.s;
  const int64_t D = s.D, group = s.H / s.Hkv;
  const int64_t nkb = attn::CeilDiv(s.T, kBlockK), nqb = attn::CeilDiv(s.T, kBlockQ);
  pool->ParallelFor(s.B * s.Hkv * nkb, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> qt(kBlockQ * D), dot(kBlockQ * D), kt(kBlockK * D), vt(kBlockK * D);
    std::vector<double> p(kBlockQ * kBlockK), ds(kBlockQ * kBlockK);
    std::vector<double> dk(kBlockK * D), dv(kBlockK * D);
    for (int64_t item = begin; item < end; ++item) {
      // First key block first: under causal masking it is seen by the most queries.
      const int64_t kb = item % nkb, bhk = item / nkb, b = bhk / s.Hkv, hk = bhk % s.Hkv;
      const int64_t j0 = kb * kBlockK, nk = std::min(kBlockK, s.T - j0);
      attn::LoadRows(a.k, b, hk, j0, nk, D, 1.0, kt.data());
      attn::LoadRows(a.v, b, hk, j0, nk, D, 1.0, vt.data());
      std::fill(dk.begin(), dk.end(), 0.0);
      std::fill(dv.begin(), dv.end(), 0.0);
      // Causal: query blocks ending before key j0 see none of this block.
      const int64_t qb_begin = a.causal ? j0 / kBlockQ : 0;
      for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
        for (int64_t qb = qb_begin; qb < nqb; ++qb) {
          const int64_t i0 = qb * kBlockQ, nq = std::min(kBlockQ, s.T - i0);
          attn::LoadRows(a.q, b, h, i0, nq, D, a.scale, qt.data());
          attn::LoadRows(a.dout, b, h, i0, nq, D, 1.0, dot.data());
          TilePds(a, b, h, i0, nq, j0, nk, qt.data(), dot.data(), kt.data(), vt.data(), p.data(),
                  ds.data());
          for (int64_t r = 0; r < nq; ++r)
            for (int64_t c = 0; c < nk; ++c) {
              attn::Axpy(p[r * kBlockK + c], &dot[r * D], &dv[c * D], D);   // dV += Pᵀ dO
              attn::Axpy(ds[r * kBlockK + c], &qt[r * D], &dk[c * D], D);   // dK += dSᵀ (scale·Q)
            }
        }
      }
      for (int64_t c = 0; c < nk; ++c) {
        attn::StoreRow(a.dk, b, j0 + c, hk, D, 1.0, &dk[c * D]);
        attn::StoreRow(a.dv, b, j0 + c, hk, D, 1.0, &dv[c * D]);
      }
    }
  });
}

// Pass 3: dQ per (b, head, query block); rows resident, key blocks streamed.
template <typename T>
void PassDq(const BwdArgs<T>& a, ThreadPool* pool) {
  const auto& s = a.s;
  const int64_t D = s.D;
  pool->ParallelFor(attn::NumQueryBlockTasks(s), 1, [&](int64_t begin, int64_t end) {
    std::vector<double> qt(kBlockQ * D), dot(kBlockQ * D), kt(kBlockK * D), vt(kBlockK * D);
    std::vector<double> p(kBlockQ * kBlockK), ds(kBlockQ * kBlockK), dq(kBlockQ * D);
    for (int64_t item = begin; item < end; ++item) {
      const auto [b, h, hk, i0, nq, j_end] = attn::QueryBlockTaskAt(item, s, a.causal);
      attn::LoadRows(a.q, b, h, i0, nq, D, a.scale, qt.data());
      attn::LoadRows(a.dout, b, h, i0, nq, D, 1.0, dot.data());
      std::fill(dq.begin(), dq.end(), 0.0);
      for (int64_t j0 = 0; j0 < j_end; j0 += kBlockK) {
        const int64_t nk = std::min(kBlockK, j_end - j0);
        attn::LoadRows(a.k, b, hk, j0, nk, D, 1.0, kt.data());
        attn::LoadRows(a.v, b, hk, j0, nk, D, 1.0, vt.data());
        TilePds(a, b, h, i0, nq, j0, nk, qt.data(), dot.data(), kt.data(), vt.data(), p.data(),
                ds.data());
        for (int64_t r = 0; r < nq; ++r)
          for (int64_t c = 0; c < nk; ++c)
            attn::Axpy(ds[r * kBlockK + c], &kt[c * D], &dq[r * D], D);  // dQ += dS K
      }
      for (int64_t r = 0; r < nq; ++r)
        attn::StoreRow(a.dq, b, i0 + r, h, D, a.scale, &dq[r * D]);  // dQ = scale·dS K
    }
  });
}

template <typename T>
void BwdImpl(const AttentionShape& s, bool causal, double scale, In in, Out out, ThreadPool* pool) {
  BwdArgs<T> a{s,
               causal,
               scale,
               attn::Rows<const T>(in[0]),
               attn::Rows<const T>(in[1]),
               attn::Rows<const T>(in[2]),
               attn::Rows<const T>(in[3]),
               attn::Rows<const T>(in[4]),
               attn::Rows<T>(out[0]),
               attn::Rows<T>(out[1]),
               attn::Rows<T>(out[2]),
               in[5].as<const T>(),
               out[3].as<T>(),
               nullptr};
  std::vector<double> d64(s.B * s.H * s.T);  // O(T) extra
  a.d64 = d64.data();
  PassD(a, pool);  // passes 2 and 3 read Dvec, so it completes first
  PassDkDv(a, pool);
  PassDq(a, pool);
}

}  // namespace

absl::Status AttentionBwd(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  AttentionShape s;
  RETURN_IF_ERROR(attn::CheckCpuAttentionQkv(Op::kAttentionBwd, in, out, &s));
  const DType dt = in[0].dtype;
  const DType st = AttentionStatsDType(dt);
  RETURN_IF_ERROR(CheckAttentionTensor("O", in[3], s.B, s.T, s.H, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("dO", in[4], s.B, s.T, s.H, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionStats("L", in[5], s, st));
  RETURN_IF_ERROR(CheckAttentionTensor("dQ", out[0], s.B, s.T, s.H, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("dK", out[1], s.B, s.T, s.Hkv, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("dV", out[2], s.B, s.T, s.Hkv, s.D, dt));
  RETURN_IF_ERROR(CheckAttentionStats("Dvec", out[3], s, st));
  const double scale = AttentionScale(desc.attention, s.D);
  if (dt == DType::kF32)
    BwdImpl<float>(s, desc.attention.causal, scale, in, out, ctx.pool);
  else
    BwdImpl<double>(s, desc.attention.causal, scale, in, out, ctx.pool);
  return absl::OkStatus();
}

}  // namespace flashtick::cpu
