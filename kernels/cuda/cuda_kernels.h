// Entry points of flash_cuda's non-attention kernels: plain parameter structs and
// launch functions that return cudaError_t, so the .cu files carry no Abseil and the
// host launchers (kernels/cuda/*_ops.cc) do all validation and Status conversion.
// Each function enqueues on `stream` and returns the launch error (never syncs).
// Pointers are device pointers; strides are in elements; row tensors are `rows`
// rows of `cols` contiguous elements. Activation dtypes: fp32, bf16, fp16; every
// parameter-shaped tensor (bias, γ, β, their gradients, losses) is fp32.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/tensor.h"

namespace flashtick::cuda {

struct RowArg {
  void* p = nullptr;
  int64_t stride = 0;
};

// ---- elementwise maps over rows (elementwise.cu) ----------------------------------
enum class MapOp : int {
  kAdd,         // t: X, Y, Z          Z = X + Y
  kAddBias,     // t: X, Y             Y = X + bias[col]
  kScale,       // t: X, Y             Y = scalar·X
  kGelu,        // t: X, Y             Y = gelu_tanh(X)
  kGeluBwd,     // t: X, dY, dX        dX = dY·y'(X)
  kGeluBwdBwd,  // t: X, dY, gdX, ∂X, ∂dY
};
struct MapParams {
  int64_t rows = 0, cols = 0;
  RowArg t[5];                  // inputs then outputs, in the op's contract order
  const float* bias = nullptr;  // kAddBias: b [cols]
  float scalar = 0.0f;          // kScale
};
cudaError_t LaunchRowMap(MapOp op, DType dtype, const MapParams& p, int num_sms,
                         cudaStream_t stream);

// Y = X converted from src to dst dtype (fp32, fp64, bf16, fp16 each way), rounding
// to nearest even once.
cudaError_t LaunchCast(DType src, DType dst, int64_t rows, int64_t cols, RowArg x, RowArg y,
                       int num_sms, cudaStream_t stream);

// ---- fallback GEMM on CUDA cores (matmul_simt.cu) ----------------------------------------
// C[M,N] = alpha·op(A)·op(B) + beta·C (+ bias), row-major with leading dims; for layouts
// cuBLASLt refuses. M ≤ 4,194,240 (grid y); beta = 0 never reads C.
struct SimtGemmParams {
  int64_t M = 0, N = 0, K = 0, lda = 0, ldb = 0, ldc = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const float* bias = nullptr;  // [N] added to every row, or nullptr (fp32: ParamDType)
};
cudaError_t LaunchSimtGemm(DType dtype, const SimtGemmParams& p, cudaStream_t stream);

// ---- row-wise forward ops: one warp per row (layernorm.cu, softmax.cu) ----------------
struct LayerNormParams {
  int64_t rows = 0, cols = 0;
  float eps = 0.0f;
  RowArg x, y;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float* mean = nullptr;  // [rows]
  float* rstd = nullptr;  // [rows]
};
cudaError_t LaunchLayerNorm(DType dtype, const LayerNormParams& p, int num_sms,
                            cudaStream_t stream);
// Y = softmax over each row of X (Y may be X).
cudaError_t LaunchSoftmax(DType dtype, int64_t rows, int64_t cols, RowArg x, RowArg y,
                          int num_sms, cudaStream_t stream);

// ---- rotary position embedding (rope.cu) ----------------------------------------------
struct RopeParams {
  int64_t B = 0, T = 0, H = 0, D = 0;
  const void* x = nullptr;
  void* y = nullptr;
  int64_t xs[3] = {0, 0, 0}, ys[3] = {0, 0, 0};  // strides of B, T, H (D is contiguous)
  int64_t position_offset = 0;
  float sin_sign = 1.0f;     // −1 for the inverse rotation
  double log2_theta = 0.0;   // log2(θ), so θ^(−2i/R) = exp2(−2i/R · log2 θ) in fp64
  int64_t R = 0;             // rotated dims (even, ≤ D); pairs from R/2 on pass through
  // Optional: position[0] (clamped to ≥ 0) is added to position_offset when the kernel
  // runs (kernels/ops/rope.h).
  const int32_t* position = nullptr;
};
cudaError_t LaunchRope(DType dtype, const RopeParams& p, int num_sms, cudaStream_t stream);

// ---- decode cache write (kv_cache_write.cu) --------------------------------------------
// Kcache[b, r, h, :] = k[b, 0, h, :] and the same for V, r = row[0] read by the kernel;
// r outside [0, Tk) writes nothing (kernels/ops/kv_cache.h).
struct KvCacheWriteParams {
  int64_t B = 0, Tk = 0, Hkv = 0, D = 0;
  const void* src[2] = {nullptr, nullptr};  // k, v
  void* dst[2] = {nullptr, nullptr};        // Kcache, Vcache
  int64_t src_s[2][2] = {};                 // [tensor][B, H] strides in elements
  int64_t dst_s[2][3] = {};                 // [tensor][B, T, H] strides in elements
  const int32_t* row = nullptr;
};
cudaError_t LaunchKvCacheWrite(size_t elem_bytes, const KvCacheWriteParams& p, int num_sms,
                               cudaStream_t stream);

// ---- column sums (bias_grad.cu) ----------------------------------------------------
// db[c] = Σ_r dY[r, c], fp32 accumulation, deterministic; `scratch` holds
// BiasGradScratchFloats(...) floats (same arguments as the launch).
int64_t BiasGradScratchFloats(DType dtype, int64_t rows, int64_t cols, RowArg dy, int num_sms);
cudaError_t LaunchBiasGrad(DType dtype, int64_t rows, int64_t cols, RowArg dy, float* db,
                           float* scratch, int num_sms, cudaStream_t stream);

// ---- LayerNorm backward (layernorm_bwd.cu) --------------------------------------------
struct LayerNormBwdParams {
  int64_t rows = 0, cols = 0;
  float eps = 0.0f;
  RowArg x, dy, gx;     // gx: BwdBwd only
  const float* gamma = nullptr;
  const float* g_gamma = nullptr;  // BwdBwd
  const float* g_beta = nullptr;   // BwdBwd
  RowArg dx;            // Bwd: dX;  BwdBwd: ∂X
  RowArg ddy;           // BwdBwd: ∂dY
  float* dgamma = nullptr;  // Bwd: dγ;  BwdBwd: ∂γ
  float* dbeta = nullptr;   // Bwd only
};
// Scratch floats each op needs (row statistics and column partials); same arguments
// as the launch.
int64_t LayerNormBwdScratchFloats(bool bwd_bwd, DType dtype, const LayerNormBwdParams& p,
                                  int num_sms);
cudaError_t LaunchLayerNormBwd(DType dtype, const LayerNormBwdParams& p, float* scratch,
                               int num_sms, cudaStream_t stream);
cudaError_t LaunchLayerNormBwdBwd(DType dtype, const LayerNormBwdParams& p, float* scratch,
                                  int num_sms, cudaStream_t stream);

// ---- softmax cross-entropy (cross_entropy.cu) -------------------------------------------
struct CrossEntropyParams {
  int64_t rows = 0, classes = 0;
  int32_t ignore_label = -1;
  RowArg logits;
  const int32_t* labels = nullptr;
  const float* dloss = nullptr;  // Bwd, BwdBwd
  RowArg g;                      // BwdBwd
  RowArg dlogits;                // Bwd: dlogits;  BwdBwd: ∂logits
  float* loss = nullptr;         // Fwd: loss;  BwdBwd: ∂dloss
};
// which: 0 forward, 1 backward, 2 backward-over-backward.
cudaError_t LaunchSoftmaxCrossEntropy(int which, DType dtype, const CrossEntropyParams& p,
                                      int num_sms, cudaStream_t stream);

// ---- optimizers on fp32 master weights (optimizer.cu) -----------------------------------
// Scalars rounded once to fp32 on the host, as kernels/ops/optimizer.h fixes them.
struct OptimizerScalarsF32 {
  float grad_scale, b1, omb1, b2, omb2, lr, eps, rho, decay, bc1, bc2;
};
struct OptimizerParams {
  int64_t n = 0;
  const float* grad = nullptr;
  const float* hhat = nullptr;  // Sophia-H: null on steps without a Hessian refresh
  float* param = nullptr;
  float* m = nullptr;
  float* v = nullptr;  // AdamW: v;  Sophia-H: h
};
cudaError_t LaunchAdamW(const OptimizerParams& p, const OptimizerScalarsF32& k, int num_sms,
                        cudaStream_t stream);
cudaError_t LaunchSophiaH(const OptimizerParams& p, const OptimizerScalarsF32& k, int num_sms,
                          cudaStream_t stream);

// ---- Hutchinson probes (hutchinson.cu; kernels/ops/hutchinson.h) ------------------------
// U[i] = ±1 from Philox4x32-10 (kernels/common/philox.h).
cudaError_t LaunchRademacher(float* u, int64_t n, uint64_t seed, int num_sms, cudaStream_t stream);
// Y = α·(β·A + U ⊙ HV); a == nullptr: Y = α·(U ⊙ HV).
cudaError_t LaunchProbeProduct(const float* u, const float* hv, const float* a, float* y,
                               int64_t n, float alpha, float beta, int num_sms,
                               cudaStream_t stream);

}  // namespace flashtick::cuda
