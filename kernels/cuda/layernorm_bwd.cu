// LayerNorm backward and backward-over-backward on CUDA (kernels/ops/layernorm_bwd.h;
// derivation in docs/derivations/layernorm_bwd_bwd.md). Per row (one warp per row,
// fp32, statistics recomputed from X with the two-pass variance):
//   μ = mean(x), r = 1/√(mean((x − μ)²) + eps), x̂ = (x − μ)·r, J a = r·(a − mean(a) − x̂·mean(a∘x̂))
//   Bwd:    g = dY∘γ;  dX = J g
//   BwdBwd: ã = J gX;  ∂dY = γ∘ã + gγ∘x̂ + gβ
//           ∂X = r²·x̂·(gx·ax − ga + m_g·m_a) − r·(ax·dX + gx·ã) + J(gγ∘dY)
// Column sums (dγ = Σ dY∘x̂, dβ = Σ dY; ∂γ = Σ dY∘ã) run afterwards as a deterministic
// column reduction (column_reduce.cuh) that re-reads the rows with the per-row scalars
// the row kernel saved in scratch: (μ, r) for Bwd, (μ, r, m_a, ax) for BwdBwd.
#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kRowThreads = 128;  // 4 warps, one row each at a time
constexpr int kRowWarps = kRowThreads / kWarp;
constexpr int kRowBlocksPerSm = 16;

template <typename T>
__device__ __forceinline__ const T* RowOf(const RowArg& a, int64_t r) {
  return static_cast<const T*>(a.p) + r * a.stride;
}

// μ and r of one row, by the whole warp (every lane gets them).
template <typename T, int kVec>
__device__ __forceinline__ float2 RowStats(const T* x, int64_t C, float eps, int lane) {
  const float inv_c = 1.0f / static_cast<float>(C);
  float s = 0.0f;
  for (int64_t c = lane * kVec; c < C; c += kWarp * kVec) {
    float xv[kVec];
    LoadVec<T, kVec>(x + c, xv);
#pragma unroll
    for (int v = 0; v < kVec; ++v) s += xv[v];
  }
  const float mean = WarpSum(s) * inv_c;
  float q = 0.0f;  // second pass over the (L1-resident) row: no E[x²] − μ² cancellation
  for (int64_t c = lane * kVec; c < C; c += kWarp * kVec) {
    float xv[kVec];
    LoadVec<T, kVec>(x + c, xv);
#pragma unroll
    for (int v = 0; v < kVec; ++v) q += (xv[v] - mean) * (xv[v] - mean);
  }
  const float var = WarpSum(q) * inv_c;
  return make_float2(mean, 1.0f / sqrtf(var + eps));  // sqrtf and / are IEEE-rounded
}

template <typename T, int kVec>
__global__ void __launch_bounds__(kRowThreads)
    layernorm_bwd_rows_kernel(LayerNormBwdParams p, float2* stats) {
  const int lane = threadIdx.x % kWarp;
  const int64_t C = p.cols;
  const float inv_c = 1.0f / static_cast<float>(C);
  for (int64_t row = int64_t{blockIdx.x} * kRowWarps + threadIdx.x / kWarp; row < p.rows;
       row += int64_t{gridDim.x} * kRowWarps) {
    const T* x = RowOf<T>(p.x, row);
    const T* dy = RowOf<T>(p.dy, row);
    const float2 st = RowStats<T, kVec>(x, C, p.eps, lane);
    float sg = 0.0f, sgx = 0.0f;  // Σ g, Σ g∘x̂
    for (int64_t c = lane * kVec; c < C; c += kWarp * kVec) {
      float xv[kVec], dv[kVec], gm[kVec];
      LoadVec<T, kVec>(x + c, xv);
      LoadVec<T, kVec>(dy + c, dv);
      LoadVec<float, kVec>(p.gamma + c, gm);
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const float g = dv[v] * gm[v];
        sg += g;
        sgx += g * (xv[v] - st.x) * st.y;
      }
    }
    const float mg = WarpSum(sg) * inv_c, mgx = WarpSum(sgx) * inv_c;
    T* dx = static_cast<T*>(p.dx.p) + row * p.dx.stride;
    for (int64_t c = lane * kVec; c < C; c += kWarp * kVec) {
      float xv[kVec], dv[kVec], gm[kVec], out[kVec];
      LoadVec<T, kVec>(x + c, xv);
      LoadVec<T, kVec>(dy + c, dv);
      LoadVec<float, kVec>(p.gamma + c, gm);
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const float xhat = (xv[v] - st.x) * st.y;
        out[v] = st.y * (dv[v] * gm[v] - mg - xhat * mgx);  // dX = J (dY∘γ)
      }
      StoreVec<T, kVec>(dx + c, out);
    }
    if (lane == 0) stats[row] = st;
  }
}

template <typename T, int kVec>
__global__ void __launch_bounds__(kRowThreads)
    layernorm_bwd_bwd_rows_kernel(LayerNormBwdParams p, float4* stats) {
  const int lane = threadIdx.x % kWarp;
  const int64_t C = p.cols;
  const float inv_c = 1.0f / static_cast<float>(C);
  for (int64_t row = int64_t{blockIdx.x} * kRowWarps + threadIdx.x / kWarp; row < p.rows;
       row += int64_t{gridDim.x} * kRowWarps) {
    const T* x = RowOf<T>(p.x, row);
    const T* dy = RowOf<T>(p.dy, row);
    const T* ga = RowOf<T>(p.gx, row);
    const float2 st = RowStats<T, kVec>(x, C, p.eps, lane);
    const float mean = st.x, r = st.y;
    // Σ g, Σ g∘x̂, Σ gX, Σ gX∘x̂, Σ g∘gX, Σ b, Σ b∘x̂ with g = dY∘γ, b = gγ∘dY.
    float s[7] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t c = lane * kVec; c < C; c += kWarp * kVec) {
      float xv[kVec], dv[kVec], av[kVec], gm[kVec], gg[kVec];
      LoadVec<T, kVec>(x + c, xv);
      LoadVec<T, kVec>(dy + c, dv);
      LoadVec<T, kVec>(ga + c, av);
      LoadVec<float, kVec>(p.gamma + c, gm);
      LoadVec<float, kVec>(p.g_gamma + c, gg);
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const float xhat = (xv[v] - mean) * r;
        const float g = dv[v] * gm[v], b = gg[v] * dv[v];
        s[0] += g;
        s[1] += g * xhat;
        s[2] += av[v];
        s[3] += av[v] * xhat;
        s[4] += g * av[v];
        s[5] += b;
        s[6] += b * xhat;
      }
    }
#pragma unroll
    for (int k = 0; k < 7; ++k) s[k] = WarpSum(s[k]) * inv_c;
    const float m_g = s[0], gx = s[1], m_a = s[2], ax = s[3], gav = s[4], m_b = s[5], bx = s[6];
    const float k = r * r * (gx * ax - gav + m_g * m_a);
    T* d_x = static_cast<T*>(p.dx.p) + row * p.dx.stride;
    T* d_dy = static_cast<T*>(p.ddy.p) + row * p.ddy.stride;
    for (int64_t c = lane * kVec; c < C; c += kWarp * kVec) {
      float xv[kVec], dv[kVec], av[kVec], gm[kVec], gg[kVec], gb[kVec], o_x[kVec], o_dy[kVec];
      LoadVec<T, kVec>(x + c, xv);
      LoadVec<T, kVec>(dy + c, dv);
      LoadVec<T, kVec>(ga + c, av);
      LoadVec<float, kVec>(p.gamma + c, gm);
      LoadVec<float, kVec>(p.g_gamma + c, gg);
      LoadVec<float, kVec>(p.g_beta + c, gb);
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const float xhat = (xv[v] - mean) * r;
        const float dx = r * (dv[v] * gm[v] - m_g - xhat * gx);   // J g
        const float at = r * (av[v] - m_a - xhat * ax);           // ã = J gX
        const float bj = r * (gg[v] * dv[v] - m_b - xhat * bx);   // J(gγ∘dY)
        o_x[v] = k * xhat - r * (ax * dx + gx * at) + bj;
        o_dy[v] = gm[v] * at + gg[v] * xhat + gb[v];
      }
      StoreVec<T, kVec>(d_x + c, o_x);
      StoreVec<T, kVec>(d_dy + c, o_dy);
    }
    if (lane == 0) stats[row] = make_float4(mean, r, m_a, ax);
  }
}

// dγ += dY∘x̂, dβ += dY.
template <typename T>
struct BwdColumnTerm {
  RowArg x, dy;
  const float2* stats;
  template <int kVec>
  __device__ __forceinline__ void Add(int64_t r, int64_t c0, float (&acc)[2][kVec]) const {
    float xv[kVec], dv[kVec];
    LoadVec<T, kVec>(RowOf<T>(x, r) + c0, xv);
    LoadVec<T, kVec>(RowOf<T>(dy, r) + c0, dv);
    const float2 st = stats[r];
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      acc[0][v] += dv[v] * ((xv[v] - st.x) * st.y);
      acc[1][v] += dv[v];
    }
  }
};

// ∂γ += dY∘ã, ã = r·(gX − m_a − x̂·ax).
template <typename T>
struct BwdBwdColumnTerm {
  RowArg x, dy, gx;
  const float4* stats;
  template <int kVec>
  __device__ __forceinline__ void Add(int64_t r, int64_t c0, float (&acc)[1][kVec]) const {
    float xv[kVec], dv[kVec], av[kVec];
    LoadVec<T, kVec>(RowOf<T>(x, r) + c0, xv);
    LoadVec<T, kVec>(RowOf<T>(dy, r) + c0, dv);
    LoadVec<T, kVec>(RowOf<T>(gx, r) + c0, av);
    const float4 st = stats[r];  // μ, r, m_a, ax
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const float xhat = (xv[v] - st.x) * st.y;
      acc[0][v] += dv[v] * (st.y * (av[v] - st.z - xhat * st.w));
    }
  }
};

// Every operand of the op can be read in kVec-element vectors.
template <typename T>
bool Vectorizable(bool bwd_bwd, const LayerNormBwdParams& p) {
  constexpr int kVec = kVecOf<T>;
  const int64_t R = p.rows, C = p.cols;
  bool ok = RowsVectorizable(p.x.p, p.x.stride, C, R, sizeof(T), kVec) &&
            RowsVectorizable(p.dy.p, p.dy.stride, C, R, sizeof(T), kVec) &&
            RowsVectorizable(p.dx.p, p.dx.stride, C, R, sizeof(T), kVec) &&
            RowsVectorizable(p.gamma, C, C, 1, sizeof(float), kVec);
  if (bwd_bwd)
    ok = ok && RowsVectorizable(p.gx.p, p.gx.stride, C, R, sizeof(T), kVec) &&
         RowsVectorizable(p.ddy.p, p.ddy.stride, C, R, sizeof(T), kVec) &&
         RowsVectorizable(p.g_gamma, C, C, 1, sizeof(float), kVec) &&
         RowsVectorizable(p.g_beta, C, C, 1, sizeof(float), kVec);
  return ok;
}

int VecFor(bool bwd_bwd, DType dtype, const LayerNormBwdParams& p) {
  switch (dtype) {
    case DType::kBF16: return Vectorizable<__nv_bfloat16>(bwd_bwd, p) ? kVecOf<__nv_bfloat16> : 1;
    case DType::kF16: return Vectorizable<__half>(bwd_bwd, p) ? kVecOf<__half> : 1;
    default: return Vectorizable<float>(bwd_bwd, p) ? kVecOf<float> : 1;
  }
}

// Row statistics first in scratch (16-byte aligned: the pool aligns, and rows·4 floats
// is a multiple of 16 bytes), column partials after them.
int64_t StatsFloats(bool bwd_bwd, int64_t rows) { return rows * (bwd_bwd ? 4 : 2); }

template <typename T, int kVec>
cudaError_t LaunchVec(bool bwd_bwd, const LayerNormBwdParams& p, float* scratch, int num_sms,
                      cudaStream_t stream) {
  const ColumnPlan plan = MakeColumnPlan(p.rows, p.cols, kVec, num_sms);
  float* partial = scratch + StatsFloats(bwd_bwd, p.rows);
  ColumnOutputs outs;
  if (p.rows > 0 && p.cols > 0) {
    const int64_t want = CeilDiv(p.rows, kRowWarps);
    const int64_t cap = int64_t{num_sms > 0 ? num_sms : 1} * kRowBlocksPerSm;
    const unsigned grid = static_cast<unsigned>(want < cap ? want : cap);
    if (bwd_bwd)
      layernorm_bwd_bwd_rows_kernel<T, kVec><<<grid, kRowThreads, 0, stream>>>(
          p, reinterpret_cast<float4*>(scratch));
    else
      layernorm_bwd_rows_kernel<T, kVec><<<grid, kRowThreads, 0, stream>>>(
          p, reinterpret_cast<float2*>(scratch));
  }
  if (bwd_bwd) {
    outs.out[0] = p.dgamma;
    const BwdBwdColumnTerm<T> term{p.x, p.dy, p.gx, reinterpret_cast<const float4*>(scratch)};
    return LaunchColumnSums<1, kVec>(plan, term, partial, outs, num_sms, stream);
  }
  outs.out[0] = p.dgamma;
  outs.out[1] = p.dbeta;
  const BwdColumnTerm<T> term{p.x, p.dy, reinterpret_cast<const float2*>(scratch)};
  return LaunchColumnSums<2, kVec>(plan, term, partial, outs, num_sms, stream);
}

template <typename T>
cudaError_t LaunchTyped(bool bwd_bwd, const LayerNormBwdParams& p, float* scratch, int num_sms,
                        cudaStream_t stream) {
  if (Vectorizable<T>(bwd_bwd, p))
    return LaunchVec<T, kVecOf<T>>(bwd_bwd, p, scratch, num_sms, stream);
  return LaunchVec<T, 1>(bwd_bwd, p, scratch, num_sms, stream);
}

cudaError_t Launch(bool bwd_bwd, DType dtype, const LayerNormBwdParams& p, float* scratch,
                   int num_sms, cudaStream_t stream) {
  switch (dtype) {
    case DType::kF32: return LaunchTyped<float>(bwd_bwd, p, scratch, num_sms, stream);
    case DType::kBF16: return LaunchTyped<__nv_bfloat16>(bwd_bwd, p, scratch, num_sms, stream);
    case DType::kF16: return LaunchTyped<__half>(bwd_bwd, p, scratch, num_sms, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

int64_t LayerNormBwdScratchFloats(bool bwd_bwd, DType dtype, const LayerNormBwdParams& p,
                                  int num_sms) {
  const ColumnPlan plan = MakeColumnPlan(p.rows, p.cols, VecFor(bwd_bwd, dtype, p), num_sms);
  return StatsFloats(bwd_bwd, p.rows) + ColumnScratchFloats(plan, bwd_bwd ? 1 : 2);
}

cudaError_t LaunchLayerNormBwd(DType dtype, const LayerNormBwdParams& p, float* scratch,
                               int num_sms, cudaStream_t stream) {
  return Launch(false, dtype, p, scratch, num_sms, stream);
}

cudaError_t LaunchLayerNormBwdBwd(DType dtype, const LayerNormBwdParams& p, float* scratch,
                                  int num_sms, cudaStream_t stream) {
  return Launch(true, dtype, p, scratch, num_sms, stream);
}

}  // namespace flashtick::cuda
