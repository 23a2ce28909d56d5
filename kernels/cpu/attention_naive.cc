// Naive full-row softmax attention, forward and backward, with low-precision
// emulation (see attention_naive.h). Loops follow the math of kernels/ops/attention.h
// line for line; the only structure is a parallel loop over (b, head) or (b, kv head).
#include "kernels/cpu/attention_naive.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace flashtick::cpu {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double RoundBf16(double x) {
  float f = static_cast<float>(x);
  if (std::isnan(f) || std::isinf(f)) return f;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest, ties to even, on the top 16 bits
  bits &= 0xFFFF0000u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

double RoundF16(double x) {
  constexpr double kMax = 65504.0;          // largest finite half
  constexpr double kMinNormal = 6.103515625e-05;  // 2^-14
  const double a = std::fabs(x);
  if (std::isnan(x)) return x;
  if (a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), x);
  if (a < kMinNormal)  // subnormals: multiples of 2^-24
    return std::ldexp(std::nearbyint(std::ldexp(x, 24)), -24);
  int e;
  std::frexp(x, &e);  // x = f·2^e, 0.5 ≤ |f| < 1: keep 11 significant bits
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, 11 - e)), e - 11);
  return std::fabs(r) > kMax ? std::copysign(std::numeric_limits<double>::infinity(), x) : r;
}

// Rounded copy of a contiguous array.
std::vector<double> Rounded(DType dt, const double* x, int64_t n) {
  std::vector<double> y(x, x + n);
  if (dt != DType::kF64)
    for (auto& e : y) e = RoundTo(dt, e);
  return y;
}

// Accumulation dtype of the emulated implementation: fp32 unless exact.
DType AccType(DType dt) { return dt == DType::kF64 ? DType::kF64 : DType::kF32; }

void ForEach(ThreadPool* pool, int64_t n, const std::function<void(int64_t)>& fn) {
  if (pool == nullptr) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  pool->ParallelFor(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  });
}

double Dot(const double* a, const double* b, int64_t n) {
  double s = 0.0;
  for (int64_t d = 0; d < n; ++d) s += a[d] * b[d];
  return s;
}

// Fills p[0..T) with softmax row i of scale·Q Kᵀ (masked entries 0), rounded as the
// emulated implementation stores P; returns the row log-sum-exp.
double SoftmaxRow(const AttentionShape& s, const NaiveAttentionOptions& opt, double scale,
                  const double* qi, const double* k, int64_t b, int64_t i, int64_t hk,
                  double* p) {
  const DType acc = AccType(opt.emulate);
  const int64_t visible = opt.causal ? i + 1 : s.T;
  double m = kNegInf;
  for (int64_t j = 0; j < visible; ++j) {
    const double* kj = k + ((b * s.T + j) * s.Hkv + hk) * s.D;
    p[j] = RoundTo(acc, scale * RoundTo(acc, Dot(qi, kj, s.D)));
    m = std::max(m, p[j]);
  }
  double sum = 0.0;
  for (int64_t j = 0; j < visible; ++j) sum += (p[j] = std::exp(p[j] - m));
  for (int64_t j = 0; j < visible; ++j) p[j] = RoundTo(opt.emulate, p[j] / sum);
  for (int64_t j = visible; j < s.T; ++j) p[j] = 0.0;
  return m + std::log(sum);
}

}  // namespace

double RoundTo(DType dtype, double x) {
  switch (dtype) {
    case DType::kF32: return static_cast<float>(x);
    case DType::kBF16: return RoundBf16(x);
    case DType::kF16: return RoundF16(x);
    default: return x;
  }
}

void NaiveAttentionFwd(const AttentionShape& s, const NaiveAttentionOptions& opt, const double* q_in,
                       const double* k_in, const double* v_in, double* o, double* lse) {
  const double scale = opt.scale != 0.0 ? opt.scale : 1.0 / std::sqrt(double(s.D));
  const DType dt = opt.emulate, acc = AccType(dt);
  const auto q = Rounded(dt, q_in, s.B * s.T * s.H * s.D);
  const auto k = Rounded(dt, k_in, s.B * s.T * s.Hkv * s.D);
  const auto v = Rounded(dt, v_in, s.B * s.T * s.Hkv * s.D);
  const int64_t group = s.H / s.Hkv;
  ForEach(opt.pool, s.B * s.H, [&](int64_t bh) {
    const int64_t b = bh / s.H, h = bh % s.H, hk = h / group;
    std::vector<double> p(s.T), oi(s.D);
    for (int64_t i = 0; i < s.T; ++i) {
      const int64_t qi = ((b * s.T + i) * s.H + h) * s.D;
      lse[bh * s.T + i] = RoundTo(acc, SoftmaxRow(s, opt, scale, &q[qi], k.data(), b, i, hk, p.data()));
      std::fill(oi.begin(), oi.end(), 0.0);
      for (int64_t j = 0; j < s.T; ++j) {  // O_i = Σ_j P_ij V_j
        const double* vj = &v[((b * s.T + j) * s.Hkv + hk) * s.D];
        for (int64_t d = 0; d < s.D; ++d) oi[d] += p[j] * vj[d];
      }
      for (int64_t d = 0; d < s.D; ++d) o[qi + d] = RoundTo(dt, oi[d]);
    }
  });
}

void NaiveAttentionBwd(const AttentionShape& s, const NaiveAttentionOptions& opt, const double* q_in,
                       const double* k_in, const double* v_in, const double* o_in,
                       const double* do_in, double* dq, double* dk, double* dv, double* dvec) {
  const double scale = opt.scale != 0.0 ? opt.scale : 1.0 / std::sqrt(double(s.D));
  const DType dt = opt.emulate, acc = AccType(dt);
  const int64_t nq = s.B * s.T * s.H * s.D, nk = s.B * s.T * s.Hkv * s.D;
  const auto q = Rounded(dt, q_in, nq), o = Rounded(dt, o_in, nq), dout = Rounded(dt, do_in, nq);
  const auto k = Rounded(dt, k_in, nk), v = Rounded(dt, v_in, nk);
  const int64_t group = s.H / s.Hkv;
  // One task per (b, query head): it owns that head's dQ rows and its own fp64 share of
  // dK, dV (O(B·H·T·D) scratch); the shares of a GQA group are summed afterwards.
  std::vector<double> dk_share(s.B * s.H * s.T * s.D, 0.0), dv_share(dk_share.size(), 0.0);
  ForEach(opt.pool, s.B * s.H, [&](int64_t bh) {
    const int64_t b = bh / s.H, h = bh % s.H, hk = h / group;
    double* dkh = &dk_share[bh * s.T * s.D];
    double* dvh = &dv_share[bh * s.T * s.D];
    std::vector<double> p(s.T), dqi(s.D);
    for (int64_t i = 0; i < s.T; ++i) {
      const int64_t qi = ((b * s.T + i) * s.H + h) * s.D;
      SoftmaxRow(s, opt, scale, &q[qi], k.data(), b, i, hk, p.data());
      const double d_i = RoundTo(acc, Dot(&dout[qi], &o[qi], s.D));  // D_i = dO_i·O_i
      if (dvec) dvec[(b * s.H + h) * s.T + i] = d_i;
      std::fill(dqi.begin(), dqi.end(), 0.0);
      for (int64_t j = 0; j < s.T; ++j) {
        if (p[j] == 0.0) continue;  // masked or underflowed: contributes nothing
        const int64_t kj = ((b * s.T + j) * s.Hkv + hk) * s.D;
        const double dp = RoundTo(acc, Dot(&dout[qi], &v[kj], s.D));  // dP_ij = dO_i·V_j
        const double ds = RoundTo(dt, p[j] * (dp - d_i));              // dS = P∘(dP − D)
        for (int64_t d = 0; d < s.D; ++d) {
          dqi[d] += ds * k[kj + d];                   // dQ = scale·dS K
          dkh[j * s.D + d] += ds * q[qi + d];         // dK = scale·dSᵀ Q
          dvh[j * s.D + d] += p[j] * dout[qi + d];    // dV = Pᵀ dO
        }
      }
      for (int64_t d = 0; d < s.D; ++d) dq[qi + d] = RoundTo(dt, scale * dqi[d]);
    }
  });
  // dK, dV of kv head hk: the sum over its group's query heads.
  ForEach(opt.pool, s.B * s.Hkv, [&](int64_t bhk) {
    const int64_t b = bhk / s.Hkv, hk = bhk % s.Hkv;
    for (int64_t j = 0; j < s.T; ++j)
      for (int64_t d = 0; d < s.D; ++d) {
        double sk = 0.0, sv = 0.0;
        for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
          sk += dk_share[((b * s.H + h) * s.T + j) * s.D + d];
          sv += dv_share[((b * s.H + h) * s.T + j) * s.D + d];
        }
        const int64_t kj = ((b * s.T + j) * s.Hkv + hk) * s.D + d;
        dk[kj] = RoundTo(dt, scale * sk);
        dv[kj] = RoundTo(dt, sv);
      }
  });
}

}  // namespace flashtick::cpu
