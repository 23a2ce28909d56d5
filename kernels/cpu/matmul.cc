// CPU Matmul: C = alpha·op(A)·op(B) + beta·C (+ b) (kernels/ops/matmul.h), blocked for the
// cache and threaded over row chunks. op(B) is packed once into a contiguous [K, N]
// panel; each task owns kRowChunk rows of C and sweeps them in register tiles of
// kTileRows × kTileCols with f64 accumulators, k blocked by kKBlock so the B block
// being reused stays in L2. Every element of C is summed over k in ascending order
// whatever the tiling or thread count, so results are bitwise reproducible (and equal
// to MatmulNaive in kernels/cpu/naive_ops.h, the loop tests compare against).
#include <algorithm>
#include <vector>

#include "common/status_macros.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_util.h"
#include "kernels/ops/gelu_bwd.h"
#include "kernels/ops/matmul.h"

namespace flashtick::cpu {
namespace {

constexpr int64_t kRowChunk = 32;   // rows of C per ParallelFor task
constexpr int64_t kColTile = 256;   // columns of C in one accumulator panel (64 KiB of f64)
constexpr int64_t kKBlock = 256;    // k per pass: a 256×8 B strip is 8 KiB (fp32), L1-resident
constexpr int kTileRows = 4;        // register tile: 4×4 f64 accumulators fit the 16 SSE
constexpr int kTileCols = 4;        // registers of baseline x86-64 without spills
constexpr double kMinParallelFlops = 1 << 18;  // below this, threading costs more than it saves

template <typename T>
struct Gemm {
  const T* a;
  int64_t a_row, a_col;  // op(A)(i, k) = a[i·a_row + k·a_col]
  const T* bp;           // op(B) packed [K, N] contiguous
  int64_t N, K;
  T* c;
  int64_t ldc;
  double alpha, beta;
  const T* bias;  // b [N], or nullptr without attrs.bias
  bool gelu;      // attrs.gelu
};

// acc[r·ld + j] += Σ_{k0 ≤ k < k1} op(A)(i0 + r, k)·Bp(k, j0 + j), r < R, j < CC.
template <typename T, int R, int CC>
inline void Tile(const Gemm<T>& g, int64_t i0, int64_t j0, int64_t k0, int64_t k1, double* acc,
                 int64_t ld) {
  double t[R][CC];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < CC; ++j) t[r][j] = acc[r * ld + j];
  const T* arow = g.a + i0 * g.a_row;
  for (int64_t k = k0; k < k1; ++k) {
    const T* b = g.bp + k * g.N + j0;
    double bv[CC];
    for (int j = 0; j < CC; ++j) bv[j] = static_cast<double>(b[j]);
    for (int r = 0; r < R; ++r) {
      const double av = static_cast<double>(arow[r * g.a_row + k * g.a_col]);
      for (int j = 0; j < CC; ++j) t[r][j] += av * bv[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < CC; ++j) acc[r * ld + j] = t[r][j];
}

// Edge tiles (fewer rows or columns than a register tile): same sums, same k order.
template <typename T>
void TileEdge(const Gemm<T>& g, int64_t i0, int64_t rows, int64_t j0, int64_t cols, int64_t k0,
              int64_t k1, double* acc, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* arow = g.a + (i0 + r) * g.a_row;
    for (int64_t j = 0; j < cols; ++j) {
      double s = acc[r * ld + j];
      for (int64_t k = k0; k < k1; ++k)
        s += static_cast<double>(arow[k * g.a_col]) * static_cast<double>(g.bp[k * g.N + j0 + j]);
      acc[r * ld + j] = s;
    }
  }
}

template <typename T>
void RunRows(const Gemm<T>& g, int64_t i_begin, int64_t i_end, std::vector<double>& acc) {
  const int64_t rows = i_end - i_begin;
  for (int64_t j0 = 0; j0 < g.N; j0 += kColTile) {
    const int64_t nt = std::min(kColTile, g.N - j0);
    std::fill(acc.begin(), acc.begin() + rows * kColTile, 0.0);
    for (int64_t k0 = 0; k0 < g.K; k0 += kKBlock) {
      const int64_t k1 = std::min(g.K, k0 + kKBlock);
      for (int64_t jj = 0; jj < nt; jj += kTileCols) {
        const int64_t cols = std::min<int64_t>(kTileCols, nt - jj);
        for (int64_t ii = i_begin; ii < i_end; ii += kTileRows) {
          const int64_t r = std::min<int64_t>(kTileRows, i_end - ii);
          double* a = acc.data() + (ii - i_begin) * kColTile + jj;
          if (r == kTileRows && cols == kTileCols)
            Tile<T, kTileRows, kTileCols>(g, ii, j0 + jj, k0, k1, a, kColTile);
          else
            TileEdge(g, ii, r, j0 + jj, cols, k0, k1, a, kColTile);
        }
      }
    }
    // C = alpha·acc + beta·C, then + b rounded again, then GELU rounded again: bit for
    // bit a matmul followed by kAddBias and kGelu (matmul.h says why the CPU keeps those
    // roundings). C is not read when beta = 0 (BLAS semantics).
    const T* brow = g.bias != nullptr ? g.bias + j0 : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      T* crow = g.c + (i_begin + r) * g.ldc + j0;
      const double* arow = acc.data() + r * kColTile;
      for (int64_t j = 0; j < nt; ++j) {
        double v = g.alpha * arow[j];
        if (g.beta != 0.0) v += g.beta * static_cast<double>(crow[j]);
        if (brow != nullptr)
          v = static_cast<double>(static_cast<T>(v)) + static_cast<double>(brow[j]);
        if (g.gelu) v = GeluTanh(static_cast<double>(static_cast<T>(v)));
        crow[j] = static_cast<T>(v);
      }
    }
  }
}

template <typename T>
absl::Status MatmulT(const OpDesc& desc, In in, Out out, const MatmulShape& s, CpuContext& ctx) {
  const TensorView &A = in[0], &B = in[1], &C = out[0];
  const int64_t M = s.M, N = s.N, K = s.K;
  if (M == 0 || N == 0) return absl::OkStatus();
  const bool ta = desc.matmul.trans_a, tb = desc.matmul.trans_b;
  // Pack op(B) into [K, N]: O(K·N), paid once and reused by every row of A.
  std::vector<T> bp(static_cast<size_t>(K * N));
  const T* b = B.as<T>();
  const int64_t ldb = B.stride(0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) bp[k * N + j] = tb ? b[j * ldb + k] : b[k * ldb + j];
  Gemm<T> g{A.as<T>(),
            ta ? 1 : A.stride(0),
            ta ? A.stride(0) : 1,
            bp.data(),
            N,
            K,
            C.as<T>(),
            C.stride(0),
            static_cast<double>(desc.matmul.alpha),
            static_cast<double>(desc.matmul.beta),
            desc.matmul.bias ? in[2].as<T>() : nullptr,
            desc.matmul.gelu};
  const int64_t chunks = (M + kRowChunk - 1) / kRowChunk;
  const bool small = 2.0 * M * N * K < kMinParallelFlops;
  ctx.pool->ParallelFor(chunks, small ? chunks : 1, [&](int64_t c0, int64_t c1) {
    std::vector<double> acc(kRowChunk * kColTile);
    for (int64_t c = c0; c < c1; ++c)
      RunRows(g, c * kRowChunk, std::min(M, (c + 1) * kRowChunk), acc);
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status Matmul(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  MatmulShape s;
  RETURN_IF_ERROR(CheckMatmulArgs(desc, in, out, &s));
  return DispatchFloat(desc.dtype, "matmul", [&](auto t) {
    return MatmulT<decltype(t)>(desc, in, out, s, ctx);
  });
}

}  // namespace flashtick::cpu
