// Plain full-row reference for attention backward-over-backward (tests only).
// Equation numbers refer to docs/derivations/attention_bwd_bwd.md. Serial and
// O(T) memory per row; the point is to be obviously right, not fast.
#include "kernels/cpu/attention_bwd_bwd_naive.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace flashtick::cpu {
namespace {

// Index helpers for the contiguous layouts in the header.
struct Idx {
  const AttentionShape& s;
  int64_t q(int64_t b, int64_t t, int64_t h) const { return ((b * s.T + t) * s.H + h) * s.D; }
  int64_t kv(int64_t b, int64_t t, int64_t g) const { return ((b * s.T + t) * s.Hkv + g) * s.D; }
  int64_t stat(int64_t b, int64_t h, int64_t t) const { return (b * s.H + h) * s.T + t; }
};

double Dot(const double* a, const double* b, int64_t n) {
  double r = 0.0;
  for (int64_t d = 0; d < n; ++d) r += a[d] * b[d];
  return r;
}

double Scale(const BobNaiveConfig& cfg) {
  return cfg.scale != 0.0 ? cfg.scale : 1.0 / std::sqrt(static_cast<double>(cfg.shape.D));
}

// Keys visible to query i: j < T, and j <= i when causal.
int64_t KeyEnd(const BobNaiveConfig& cfg, int64_t i) { return cfg.causal ? i + 1 : cfg.shape.T; }

// Full row i of P for head h (kv head g): p[j] for j < KeyEnd; returns L_i.
double SoftmaxRow(const BobNaiveConfig& cfg, const double* q, const double* k, int64_t b, int64_t h,
                  int64_t i, std::vector<double>& p) {
  const Idx ix{cfg.shape};
  const int64_t g = h / (cfg.shape.H / cfg.shape.Hkv), D = cfg.shape.D;
  const int64_t jend = KeyEnd(cfg, i);
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < jend; ++j) {
    p[j] = Scale(cfg) * Dot(q + ix.q(b, i, h), k + ix.kv(b, j, g), D);
    m = std::max(m, p[j]);
  }
  double l = 0.0;
  for (int64_t j = 0; j < jend; ++j) l += std::exp(p[j] - m);
  const double lse = m + std::log(l);
  for (int64_t j = 0; j < jend; ++j) p[j] = std::exp(p[j] - lse);
  return lse;
}

}  // namespace

void BobNaiveForwardStats(const BobNaiveConfig& cfg, const double* q, const double* k,
                          const double* v, const double* dout, double* o, double* lse,
                          double* dvec) {
  const AttentionShape& s = cfg.shape;
  const Idx ix{s};
  std::vector<double> p(s.T);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t g = h / (s.H / s.Hkv);
      for (int64_t i = 0; i < s.T; ++i) {
        lse[ix.stat(b, h, i)] = SoftmaxRow(cfg, q, k, b, h, i, p);
        double* oi = o + ix.q(b, i, h);
        std::fill(oi, oi + s.D, 0.0);
        for (int64_t j = 0; j < KeyEnd(cfg, i); ++j)
          for (int64_t d = 0; d < s.D; ++d) oi[d] += p[j] * v[ix.kv(b, j, g) + d];
        dvec[ix.stat(b, h, i)] = Dot(dout + ix.q(b, i, h), oi, s.D);  // (0)
      }
    }
}

void BobNaiveBackward(const BobNaiveConfig& cfg, const double* q, const double* k, const double* v,
                      const double* dout, double* dq, double* dk, double* dv) {
  const AttentionShape& s = cfg.shape;
  const Idx ix{s};
  const double scale = Scale(cfg);
  std::fill(dq, dq + s.B * s.T * s.H * s.D, 0.0);
  std::fill(dk, dk + s.B * s.T * s.Hkv * s.D, 0.0);
  std::fill(dv, dv + s.B * s.T * s.Hkv * s.D, 0.0);
  std::vector<double> p(s.T), dp(s.T);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t g = h / (s.H / s.Hkv);
      for (int64_t i = 0; i < s.T; ++i) {
        SoftmaxRow(cfg, q, k, b, h, i, p);
        const double* doi = dout + ix.q(b, i, h);
        const int64_t jend = KeyEnd(cfg, i);
        double di = 0.0;  // D_i = Σ_j P_ij dP_ij (= dO_i·O_i)
        for (int64_t j = 0; j < jend; ++j) {
          dp[j] = Dot(doi, v + ix.kv(b, j, g), s.D);
          di += p[j] * dp[j];
        }
        for (int64_t j = 0; j < jend; ++j) {
          const double ds = p[j] * (dp[j] - di);
          for (int64_t d = 0; d < s.D; ++d) {
            dq[ix.q(b, i, h) + d] += scale * ds * k[ix.kv(b, j, g) + d];
            dk[ix.kv(b, j, g) + d] += scale * ds * q[ix.q(b, i, h) + d];
            dv[ix.kv(b, j, g) + d] += p[j] * doi[d];
          }
        }
      }
    }
}

void BobNaiveBwdBwd(const BobNaiveConfig& cfg, const double* q, const double* k, const double* v,
                    const double* dout, const double* gq, const double* gk, const double* gv,
                    double* ddq, double* ddk, double* ddv, double* dddo, double (*round)(double),
                    const double* dvec_in) {
  auto rd = [round](double x) { return round ? round(x) : x; };
  const AttentionShape& s = cfg.shape;
  const Idx ix{s};
  const double scale = Scale(cfg);
  std::fill(ddq, ddq + s.B * s.T * s.H * s.D, 0.0);
  std::fill(dddo, dddo + s.B * s.T * s.H * s.D, 0.0);
  std::fill(ddk, ddk + s.B * s.T * s.Hkv * s.D, 0.0);
  std::fill(ddv, ddv + s.B * s.T * s.Hkv * s.D, 0.0);
  std::vector<double> p(s.T), dp(s.T), G(s.T), Bm(s.T), o(s.D);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t g = h / (s.H / s.Hkv);
      for (int64_t i = 0; i < s.T; ++i) {
        SoftmaxRow(cfg, q, k, b, h, i, p);
        const int64_t jend = KeyEnd(cfg, i);
        const double *qi = q + ix.q(b, i, h), *doi = dout + ix.q(b, i, h);
        const double* gqi = gq + ix.q(b, i, h);
        std::fill(o.begin(), o.end(), 0.0);
        double di = 0.0, c = 0.0, e = 0.0;
        for (int64_t j = 0; j < jend; ++j) {
          const double *kj = k + ix.kv(b, j, g), *vj = v + ix.kv(b, j, g);
          for (int64_t d = 0; d < s.D; ++d) o[d] += p[j] * vj[d];
          dp[j] = Dot(doi, vj, s.D);
          G[j] = scale * (Dot(gqi, kj, s.D) + Dot(qi, gk + ix.kv(b, j, g), s.D));  // (1)
          Bm[j] = Dot(doi, gv + ix.kv(b, j, g), s.D);                              // (2)
          c += p[j] * G[j];                                                        // (3)
        }
        di = dvec_in ? dvec_in[ix.stat(b, h, i)] : Dot(doi, o.data(), s.D);  // (0)
        for (int64_t j = 0; j < jend; ++j)
          e += p[j] * ((dp[j] - di) * G[j] - c * dp[j] + Bm[j]);  // (4), (5)
        for (int64_t j = 0; j < jend; ++j) {
          const double *kj = k + ix.kv(b, j, g), *vj = v + ix.kv(b, j, g);
          const double *gkj = gk + ix.kv(b, j, g), *gvj = gv + ix.kv(b, j, g);
          const double ds = rd(p[j] * (dp[j] - di));
          const double hh = (dp[j] - di) * G[j] - c * dp[j] + Bm[j];  // (4)
          const double ds2 = rd(p[j] * (hh - e));                     // (11)
          const double pgc = rd(p[j] * (G[j] - c));
          const double pj = rd(p[j]);
          for (int64_t d = 0; d < s.D; ++d) {
            dddo[ix.q(b, i, h) + d] += pj * gvj[d] + pgc * vj[d];            // (9)
            ddv[ix.kv(b, j, g) + d] += pgc * doi[d];                         // (10)
            ddq[ix.q(b, i, h) + d] += scale * (ds * gkj[d] + ds2 * kj[d]);   // (13)
            ddk[ix.kv(b, j, g) + d] += scale * (ds * gqi[d] + ds2 * qi[d]);  // (14)
          }
        }
      }
    }
  if (round != nullptr) {
    const int64_t nq = s.B * s.T * s.H * s.D, nkv = s.B * s.T * s.Hkv * s.D;
    for (auto [ptr, n] :
         {std::pair{ddq, nq}, std::pair{dddo, nq}, std::pair{ddk, nkv}, std::pair{ddv, nkv}})
      for (int64_t x = 0; x < n; ++x) ptr[x] = round(ptr[x]);
  }
}

}  // namespace flashtick::cpu
