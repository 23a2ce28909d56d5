// CPU reference for attention backward-over-backward (Op::kAttentionBwdBwd), in the
// O(N) two-pass schedule of docs/derivations/attention_bwd_bwd.md §3 (the same one the
// CUDA kernels run), so this file is the readable specification of those kernels.
//   in:  Q, K, V, O, dO, L, Dvec, gQ, gK, gV     out: ∂Q, ∂K, ∂V, ∂dO
// Pass 1 (query rows resident): c, a, ∂dO and ∂Q with end-of-row corrections (9), (13′);
// writes the row states c and e (8). Pass 2 (key rows resident, looping over the query
// heads of the GQA group): ∂K (14) and ∂V (10). Tiles of kRowTile × kKeyTile; extra
// memory is the two row states (2·B·H·T doubles) plus per-thread tiles. f32 or f64
// tensors, every sum in f64.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/ops/attention.h"

namespace flashtick::cpu {
namespace {

// 32 query rows × 64 keys: the fp64 tiles of one task (≈ 11·32·D + 4·64·D doubles for
// D = 64: 40 KB) stay in L2, and 32-row tasks keep causal load balance fine-grained.
constexpr int64_t kRowTile = 32;
constexpr int64_t kKeyTile = 64;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Row accessor for a [B, T, heads, D] view whose last dim is contiguous.
template <typename T>
struct Rows {
  T* data = nullptr;
  int64_t sb = 0, st = 0, sh = 0;
  explicit Rows(const TensorView& v)
      : data(static_cast<T*>(v.data)), sb(v.stride(0)), st(v.stride(1)), sh(v.stride(2)) {}
  T* Row(int64_t b, int64_t t, int64_t h) const { return data + b * sb + t * st + h * sh; }
};

// dst[r·D + d] = src(b, t0 + r, h, d) in fp64, for r < n.
template <typename T>
void LoadTile(const Rows<const T>& src, int64_t b, int64_t h, int64_t t0, int64_t n, int64_t D,
              double* dst) {
  for (int64_t r = 0; r < n; ++r) {
    const T* row = src.Row(b, t0 + r, h);
    for (int64_t d = 0; d < D; ++d) dst[r * D + d] = static_cast<double>(row[d]);
  }
}

double Dot(const double* a, const double* b, int64_t n) {
  double r = 0.0;
  for (int64_t d = 0; d < n; ++d) r += a[d] * b[d];
  return r;
}

void Axpy(double alpha, const double* x, double* y, int64_t n) {
  for (int64_t d = 0; d < n; ++d) y[d] += alpha * x[d];
}

template <typename T>
struct BobArgs {
  AttentionShape s;
  bool causal = true;
  double scale = 1.0;
  Rows<const T> q, k, v, o, dout, gq, gk, gv;
  const T* lse;   // [B, H, T]
  const T* dvec;  // [B, H, T]
  Rows<T> ddq, ddk, ddv, dddo;
  double* c;  // row state c (3), [B, H, T]
  double* e;  // row state e (8), [B, H, T]
  int64_t Stat(int64_t b, int64_t h, int64_t t) const { return (b * s.H + h) * s.T + t; }
};

// Pass 1 for query rows [i0, i0 + n) of head h: eq. (1)-(9), (13′).
template <typename T>
void Pass1RowTile(const BobArgs<T>& a, int64_t b, int64_t h, int64_t i0) {
  const int64_t D = a.s.D, g = h / (a.s.H / a.s.Hkv);
  const int64_t n = std::min(kRowTile, a.s.T - i0);
  std::vector<double> buf((3 + 4) * kRowTile * D + 4 * kKeyTile * D, 0.0);
  double *q = buf.data(), *dO = q + kRowTile * D, *gQ = dO + kRowTile * D;
  double *y_do = gQ + kRowTile * D, *y_q = y_do + kRowTile * D;  // accumulators of (9), (13′)
  double *z1 = y_q + kRowTile * D, *z2 = z1 + kRowTile * D;      // Σ dS K and Σ P K
  double *K = z2 + kRowTile * D, *V = K + kKeyTile * D, *gK = V + kKeyTile * D;
  double* gV = gK + kKeyTile * D;
  double c[kRowTile] = {}, sum_x[kRowTile] = {};
  LoadTile(a.q, b, h, i0, n, D, q);
  LoadTile(a.dout, b, h, i0, n, D, dO);
  LoadTile(a.gq, b, h, i0, n, D, gQ);
  // Causal: keys past the tile's last row are invisible to every row of it.
  const int64_t key_end = a.causal ? i0 + n : a.s.T;
  for (int64_t j0 = 0; j0 < key_end; j0 += kKeyTile) {
    const int64_t m = std::min(kKeyTile, key_end - j0);
    LoadTile(a.k, b, g, j0, m, D, K);
    LoadTile(a.v, b, g, j0, m, D, V);
    LoadTile(a.gk, b, g, j0, m, D, gK);
    LoadTile(a.gv, b, g, j0, m, D, gV);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t i = i0 + r;
      const double L = a.lse[a.Stat(b, h, i)], Di = a.dvec[a.Stat(b, h, i)];
      const double *qi = q + r * D, *doi = dO + r * D, *gqi = gQ + r * D;
      const int64_t m_vis = a.causal ? std::min(m, i - j0 + 1) : m;  // element-wise mask
      for (int64_t cj = 0; cj < m_vis; ++cj) {
        const double *kj = K + cj * D, *vj = V + cj * D, *gkj = gK + cj * D, *gvj = gV + cj * D;
        const double p = std::exp(a.scale * Dot(qi, kj, D) - L);         // P from stored L
        const double dp = Dot(doi, vj, D);                               // dP = dO Vᵀ
        const double G = a.scale * (Dot(gqi, kj, D) + Dot(qi, gkj, D));  // (1)
        const double Bij = Dot(doi, gvj, D);                             // (2)
        const double ds = p * (dp - Di);                                 // dS
        const double x = ds * G + p * Bij;                               // (6)
        c[r] += p * G;                                                   // (3)
        sum_x[r] += x;                                                   // (7)
        Axpy(p, gvj, y_do + r * D, D);                                   // (9): P gV
        Axpy(p * G, vj, y_do + r * D, D);                                // (9): (P∘G) V
        Axpy(ds, gkj, y_q + r * D, D);                                   // (13′): dS gK
        Axpy(x, kj, y_q + r * D, D);                                     // (13′): X K
        Axpy(ds, kj, z1 + r * D, D);                                     // (13′): dS K
        Axpy(p, kj, z2 + r * D, D);                                      // (13′): P K
      }
    }
  }
  // End-of-row corrections, now that c_i and a_i are complete.
  for (int64_t r = 0; r < n; ++r) {
    const int64_t i = i0 + r;
    const double Di = a.dvec[a.Stat(b, h, i)];
    a.c[a.Stat(b, h, i)] = c[r];
    a.e[a.Stat(b, h, i)] = sum_x[r] - c[r] * Di;  // (8)
    const T* oi = a.o.Row(b, i, h);
    T* ddo_i = a.dddo.Row(b, i, h);
    T* ddq_i = a.ddq.Row(b, i, h);
    for (int64_t d = 0; d < D; ++d) {
      ddo_i[d] = static_cast<T>(y_do[r * D + d] - c[r] * static_cast<double>(oi[d]));  // (9)
      ddq_i[d] = static_cast<T>(
          a.scale * (y_q[r * D + d] - c[r] * z1[r * D + d] - sum_x[r] * z2[r * D + d]));  // (13′)
    }
  }
}

// Pass 2 for key rows [j0, j0 + m) of K/V head g: eq. (4), (10), (11), (14), summed
// over the query heads of the group (GQA) inside this task, so no two tasks share a row.
template <typename T>
void Pass2KeyTile(const BobArgs<T>& a, int64_t b, int64_t g, int64_t j0) {
  const int64_t D = a.s.D, group = a.s.H / a.s.Hkv;
  const int64_t m = std::min(kKeyTile, a.s.T - j0);
  std::vector<double> buf(6 * kKeyTile * D + 3 * kRowTile * D, 0.0);
  double *K = buf.data(), *V = K + kKeyTile * D, *gK = V + kKeyTile * D, *gV = gK + kKeyTile * D;
  double *dk = gV + kKeyTile * D, *dv = dk + kKeyTile * D;  // accumulators of (14), (10)
  double *q = dv + kKeyTile * D, *dO = q + kRowTile * D, *gQ = dO + kRowTile * D;
  LoadTile(a.k, b, g, j0, m, D, K);
  LoadTile(a.v, b, g, j0, m, D, V);
  LoadTile(a.gk, b, g, j0, m, D, gK);
  LoadTile(a.gv, b, g, j0, m, D, gV);
  // Causal: query rows before j0 see none of these keys; start at the tile holding j0.
  const int64_t row_begin = a.causal ? (j0 / kRowTile) * kRowTile : 0;
  for (int64_t h = g * group; h < (g + 1) * group; ++h) {
    for (int64_t i0 = row_begin; i0 < a.s.T; i0 += kRowTile) {
      const int64_t n = std::min(kRowTile, a.s.T - i0);
      LoadTile(a.q, b, h, i0, n, D, q);
      LoadTile(a.dout, b, h, i0, n, D, dO);
      LoadTile(a.gq, b, h, i0, n, D, gQ);
      for (int64_t r = 0; r < n; ++r) {
        const int64_t i = i0 + r;
        const int64_t st = a.Stat(b, h, i);
        const double L = a.lse[st], Di = a.dvec[st], ci = a.c[st], ei = a.e[st];
        const double *qi = q + r * D, *doi = dO + r * D, *gqi = gQ + r * D;
        const int64_t m_vis = a.causal ? std::min(m, i - j0 + 1) : m;
        for (int64_t cj = 0; cj < m_vis; ++cj) {
          const double *kj = K + cj * D, *vj = V + cj * D;
          const double *gkj = gK + cj * D, *gvj = gV + cj * D;
          const double p = std::exp(a.scale * Dot(qi, kj, D) - L);
          const double dp = Dot(doi, vj, D);
          const double G = a.scale * (Dot(gqi, kj, D) + Dot(qi, gkj, D));  // (1)
          const double Bij = Dot(doi, gvj, D);                             // (2)
          const double ds = p * (dp - Di);
          const double Hij = (dp - Di) * G - ci * dp + Bij;  // (4)
          const double ds2 = p * (Hij - ei);                 // (11)
          Axpy(p * (G - ci), doi, dv + cj * D, D);           // (10)
          Axpy(ds, gqi, dk + cj * D, D);                     // (14): dSᵀ gQ
          Axpy(ds2, qi, dk + cj * D, D);                     // (14): ∂Sᵀ Q
        }
      }
    }
  }
  for (int64_t cj = 0; cj < m; ++cj) {
    T* ddk_j = a.ddk.Row(b, j0 + cj, g);
    T* ddv_j = a.ddv.Row(b, j0 + cj, g);
    for (int64_t d = 0; d < D; ++d) {
      ddk_j[d] = static_cast<T>(a.scale * dk[cj * D + d]);
      ddv_j[d] = static_cast<T>(dv[cj * D + d]);
    }
  }
}

void ParallelTasks(CpuContext& ctx, int64_t n, const std::function<void(int64_t)>& task) {
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) task(t);
  };
  if (ctx.pool != nullptr) {
    ctx.pool->ParallelFor(n, 1, run);
  } else {
    run(0, n);
  }
}

// Shape, dtype and layout of one [B, T, heads, D] operand.
absl::Status CheckOperand(const char* name, const TensorView& t, const AttentionShape& s,
                          int64_t heads, DType dtype) {
  if (t.data == nullptr || t.rank != 4 || t.dim(0) != s.B || t.dim(1) != s.T || t.dim(2) != heads ||
      t.dim(3) != s.D || t.dtype != dtype || t.stride(3) != 1)
    return absl::InvalidArgumentError(
        absl::StrCat("attention_bwd_bwd: ", name, " must be a ", DTypeName(dtype), "[", s.B, ",",
                     s.T, ",", heads, ",", s.D, "] view with a contiguous last dim; got ",
                     t.data == nullptr ? std::string("no data") : t.DebugString()));
  return absl::OkStatus();
}

absl::Status CheckStats(const char* name, const TensorView& t, const AttentionShape& s,
                        DType dtype) {
  if (t.data == nullptr || t.rank != 3 || t.dim(0) != s.B || t.dim(1) != s.H || t.dim(2) != s.T ||
      !t.contiguous() || t.dtype != dtype)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention_bwd_bwd: ", name, " must be a contiguous ", DTypeName(dtype), "[", s.B, ",", s.H,
        ",", s.T, "]; got ", t.data == nullptr ? std::string("no data") : t.DebugString()));
  return absl::OkStatus();
}

template <typename T>
absl::Status Run(const OpDesc& desc, In in, Out out, const AttentionShape& s, CpuContext& ctx) {
  std::vector<double> states(2 * s.B * s.H * s.T);  // c and e: the O(N) extra memory
  BobArgs<T> a{s,
               desc.attention.causal,
               desc.attention.scale != 0.0f ? static_cast<double>(desc.attention.scale)
                                            : 1.0 / std::sqrt(static_cast<double>(s.D)),
               Rows<const T>(in[0]),
               Rows<const T>(in[1]),
               Rows<const T>(in[2]),
               Rows<const T>(in[3]),
               Rows<const T>(in[4]),
               Rows<const T>(in[7]),
               Rows<const T>(in[8]),
               Rows<const T>(in[9]),
               in[5].as<const T>(),
               in[6].as<const T>(),
               Rows<T>(out[0]),
               Rows<T>(out[1]),
               Rows<T>(out[2]),
               Rows<T>(out[3]),
               states.data(),
               states.data() + s.B * s.H * s.T};
  const int64_t row_tiles = CeilDiv(s.T, kRowTile), key_tiles = CeilDiv(s.T, kKeyTile);
  // Pass 1 must finish (c, e complete) before pass 2 reads them: ParallelFor blocks.
  ParallelTasks(ctx, s.B * s.H * row_tiles, [&](int64_t t) {
    // Last row tiles first: under causal masking they cost the most.
    const int64_t it = row_tiles - 1 - t % row_tiles, bh = t / row_tiles;
    Pass1RowTile(a, bh / s.H, bh % s.H, it * kRowTile);
  });
  ParallelTasks(ctx, s.B * s.Hkv * key_tiles, [&](int64_t t) {
    const int64_t jt = t % key_tiles, bg = t / key_tiles;
    Pass2KeyTile(a, bg / s.Hkv, bg % s.Hkv, jt * kKeyTile);
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status AttentionBwdBwd(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  if (in.size() != 10 || out.size() != 4)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention_bwd_bwd takes 10 inputs (Q, K, V, O, dO, L, Dvec, gQ, gK, gV) and 4 outputs "
        "(∂Q, ∂K, ∂V, ∂dO); got ",
        in.size(), " and ", out.size()));
  AttentionShape s;
  RETURN_IF_ERROR(CheckAttentionArgs(in[0], in[1], in[2], &s));
  const DType dt = in[0].dtype;
  if (dt != DType::kF32 && dt != DType::kF64)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention_bwd_bwd: cpu_reference computes in fp32 or fp64; got ", DTypeName(dt)));
  const char* kNames[] = {"Q", "K", "V", "O", "dO", "L", "Dvec", "gQ", "gK", "gV"};
  const int64_t in_heads[] = {s.H, s.Hkv, s.Hkv, s.H, s.H, 0, 0, s.H, s.Hkv, s.Hkv};
  for (int i : {3, 4, 7, 8, 9}) RETURN_IF_ERROR(CheckOperand(kNames[i], in[i], s, in_heads[i], dt));
  RETURN_IF_ERROR(CheckStats("L", in[5], s, dt));
  RETURN_IF_ERROR(CheckStats("Dvec", in[6], s, dt));
  const char* kOutNames[] = {"∂Q", "∂K", "∂V", "∂dO"};
  const int64_t out_heads[] = {s.H, s.Hkv, s.Hkv, s.H};
  for (int i = 0; i < 4; ++i) {
    RETURN_IF_ERROR(CheckOperand(kOutNames[i], out[i], s, out_heads[i], dt));
    // Pass 2 reads Q, dO, gQ after pass 1 wrote ∂Q, ∂dO: outputs must not alias inputs.
    for (const TensorView& t : in)
      if (t.data == out[i].data)
        return absl::InvalidArgumentError(absl::StrCat("attention_bwd_bwd: output ", kOutNames[i],
                                                       " aliases an input; pass distinct buffers"));
  }
  if (dt == DType::kF64) return Run<double>(desc, in, out, s, ctx);
  return Run<float>(desc, in, out, s, ctx);
}

}  // namespace flashtick::cpu
