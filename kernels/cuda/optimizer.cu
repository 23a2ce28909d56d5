// AdamW and Sophia-H steps on fp32 master weights (kernels/ops/optimizer.h),
// elementwise, in the exact operation order the contract fixes. Every multiply, add,
// divide and square root is an explicitly rounded intrinsic (__fmul_rn, ...), which
// nvcc never contracts into a fused multiply-add, so each element is bitwise equal
// to the CPU reference (which computes in fp32 without FMA on baseline x86-64).
//   g = s·grad;  m = β1·m + (1 − β1)·g
//   AdamW:    v = β2·v + (1 − β2)·g²;  θ = θ·decay;  θ = θ − lr·((m/bc1) / (√(v/bc2) + ε))
//   Sophia-H: h = β2·h + (1 − β2)·ĥ (when ĥ is given);  θ = θ·decay;
//             θ = θ − lr·clamp(m / max(ρ·h, ε), −1, 1)
// max and clamp are written as std::max / std::clamp evaluate them, so NaN propagates
// the same way on both backends.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

constexpr int kThreads = 256;

struct AdamWStep {
  __device__ __forceinline__ static void Apply(const OptimizerScalarsF32& k, float grad, float hhat,
                                               bool has_hhat, float& theta, float& m, float& v) {
    const float g = __fmul_rn(k.grad_scale, grad);
    m = __fadd_rn(__fmul_rn(k.b1, m), __fmul_rn(k.omb1, g));
    v = __fadd_rn(__fmul_rn(k.b2, v), __fmul_rn(k.omb2, __fmul_rn(g, g)));
    theta = __fmul_rn(theta, k.decay);
    const float denom = __fadd_rn(__fsqrt_rn(__fdiv_rn(v, k.bc2)), k.eps);
    theta = __fsub_rn(theta, __fmul_rn(k.lr, __fdiv_rn(__fdiv_rn(m, k.bc1), denom)));
  }
};

struct SophiaHStep {
  __device__ __forceinline__ static void Apply(const OptimizerScalarsF32& k, float grad, float hhat,
                                               bool has_hhat, float& theta, float& m, float& h) {
    const float g = __fmul_rn(k.grad_scale, grad);
    m = __fadd_rn(__fmul_rn(k.b1, m), __fmul_rn(k.omb1, g));
    if (has_hhat) h = __fadd_rn(__fmul_rn(k.b2, h), __fmul_rn(k.omb2, hhat));
    theta = __fmul_rn(theta, k.decay);
    const float rh = __fmul_rn(k.rho, h);
    const float denom = rh < k.eps ? k.eps : rh;                        // std::max(ρh, ε)
    const float ratio = __fdiv_rn(m, denom);
    const float c = ratio < -1.0f ? -1.0f : (1.0f < ratio ? 1.0f : ratio);  // std::clamp
    theta = __fsub_rn(theta, __fmul_rn(k.lr, c));
  }
};

template <typename Step>
__device__ __forceinline__ void StepOne(const OptimizerParams& p, const OptimizerScalarsF32& k,
                                        int64_t i) {
  const bool has_hhat = p.hhat != nullptr;
  float theta = p.param[i], m = p.m[i], v = p.v[i];
  Step::Apply(k, p.grad[i], has_hhat ? p.hhat[i] : 0.0f, has_hhat, theta, m, v);
  p.param[i] = theta;
  p.m[i] = m;
  p.v[i] = v;
}

template <typename Step, int kVec>
__global__ void __launch_bounds__(kThreads)
    optimizer_kernel(OptimizerParams p, OptimizerScalarsF32 k) {
  const int64_t tid = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t nvec = p.n / kVec;
  const bool has_hhat = p.hhat != nullptr;
  for (int64_t i = tid; i < nvec; i += stride) {
    const int64_t e = i * kVec;
    float g[kVec], hh[kVec], th[kVec], m[kVec], v[kVec];
    const Pack<float, kVec> pg = *reinterpret_cast<const Pack<float, kVec>*>(p.grad + e);
    Pack<float, kVec> pt = *reinterpret_cast<const Pack<float, kVec>*>(p.param + e);
    Pack<float, kVec> pm = *reinterpret_cast<const Pack<float, kVec>*>(p.m + e);
    Pack<float, kVec> pv = *reinterpret_cast<const Pack<float, kVec>*>(p.v + e);
    Pack<float, kVec> ph{};
    if (has_hhat) ph = *reinterpret_cast<const Pack<float, kVec>*>(p.hhat + e);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      g[j] = pg.v[j], hh[j] = ph.v[j], th[j] = pt.v[j], m[j] = pm.v[j], v[j] = pv.v[j];
      Step::Apply(k, g[j], hh[j], has_hhat, th[j], m[j], v[j]);
      pt.v[j] = th[j], pm.v[j] = m[j], pv.v[j] = v[j];
    }
    *reinterpret_cast<Pack<float, kVec>*>(p.param + e) = pt;
    *reinterpret_cast<Pack<float, kVec>*>(p.m + e) = pm;
    *reinterpret_cast<Pack<float, kVec>*>(p.v + e) = pv;
  }
  // The n mod kVec elements past the last whole vector.
  if (tid < p.n - nvec * kVec) StepOne<Step>(p, k, nvec * kVec + tid);
}

template <typename Step>
cudaError_t Launch(const OptimizerParams& p, const OptimizerScalarsF32& k, int num_sms,
                   cudaStream_t stream) {
  if (p.n == 0) return cudaSuccess;
  constexpr int kVec = kVecOf<float>;
  const bool vec = Aligned(p.grad, kVecBytes) && Aligned(p.param, kVecBytes) &&
                   Aligned(p.m, kVecBytes) && Aligned(p.v, kVecBytes) &&
                   (p.hhat == nullptr || Aligned(p.hhat, kVecBytes));
  if (vec) {
    // At least one block of kThreads > kVec threads, so the tail always has its threads.
    optimizer_kernel<Step, kVec>
        <<<GridFor(CeilDiv(p.n, kVec), kThreads, num_sms), kThreads, 0, stream>>>(p, k);
  } else {
    optimizer_kernel<Step, 1><<<GridFor(p.n, kThreads, num_sms), kThreads, 0, stream>>>(p, k);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchAdamW(const OptimizerParams& p, const OptimizerScalarsF32& k, int num_sms,
                        cudaStream_t stream) {
  return Launch<AdamWStep>(p, k, num_sms, stream);
}

cudaError_t LaunchSophiaH(const OptimizerParams& p, const OptimizerScalarsF32& k, int num_sms,
                          cudaStream_t stream) {
  return Launch<SophiaHStep>(p, k, num_sms, stream);
}

}  // namespace flashtick::cuda
