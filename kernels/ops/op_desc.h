// OpDesc: which op to run and its attributes. Inputs and outputs are positional;
// each op's header in kernels/ops/ lists them in order with shapes and dtypes.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/tensor.h"

namespace flashtick {

enum class Op : uint8_t {
  // Dense algebra (kernels/ops/matmul.h, elementwise.h)
  kMatmul,          // C = alpha·op(A)·op(B) + beta·C [+ b broadcast over rows]
  kAddBias,         // Y[M,N] += b[N]
  kBiasGrad,        // db[N] = Σ_m dY[m,n]
  kAdd,             // Z = X + Y (same shape)
  kCast,            // Y = X converted to Y's dtype
  // Normalisation and activations (layernorm.h, gelu.h, softmax.h)
  kLayerNorm,
  kLayerNormBwd,
  kLayerNormBwdBwd,
  kGelu,
  kGeluBwd,
  kGeluBwdBwd,
  kSoftmax,         // row softmax over the last dim
  // Positions (rope.h)
  kRope,            // rotary embedding in place-compatible form; inverse = its VJP
  // Serving (kv_cache.h)
  kKvCacheWrite,    // one new K and V row into the decode caches, at a row read on the device
  // Attention (attention.h)
  kAttentionFwd,
  kAttentionBwd,
  kAttentionBwdBwd,
  kAttentionDecode, // one new query row against cached K/V (serving)
  // Loss (cross_entropy.h)
  kSoftmaxCrossEntropy,
  kSoftmaxCrossEntropyBwd,
  kSoftmaxCrossEntropyBwdBwd,
  // Optimizers (optimizer.h), fp32 master weights
  kAdamW,
  kSophiaH,
  // Hutchinson's Hessian-diagonal estimate (hutchinson.h)
  kRademacher,      // U = ±1 from counter-based Philox
  kProbeProduct,    // Y = α·(β·A + U ⊙ HV)
};

const char* OpName(Op op);

struct MatmulAttrs {
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  float beta = 0.0f;  // 1 accumulates into the output (gradient accumulation)
  bool bias = false;  // a third input b [N] is added to every row of C (the linear
                      // layer's bias; in the GEMM's epilogue where it can be: matmul.h)
  bool gelu = false;  // C = GELU(…) of the whole result, as Op::kGelu after it (matmul.h)
};

struct AttentionAttrs {
  bool causal = true;
  float scale = 0.0f;  // 0 means 1/sqrt(D)
  int head_dim = 0;    // D, read only by Backend::KernelPath (Run takes D from Q)
};

struct LayerNormAttrs {
  float eps = 1e-5f;
};

struct RopeAttrs {
  float theta = 10000.0f;
  int64_t position_offset = 0;  // position of row t is offset + t
  bool inverse = false;         // rotate by −angle: the VJP (rotation is orthogonal)
  int64_t rotary_dims = -1;     // R: leading dims of each head that rotate (−1 = all D);
                                // the other D − R pass through (partial rotary, rope.h)
};

struct CrossEntropyAttrs {
  int32_t ignore_label = -1;  // rows with this label contribute nothing
};

struct OptimizerAttrs {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;  // AdamW second moment; Sophia-H Hessian EMA (0.99)
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  float rho = 0.04f;     // Sophia-H clip threshold
  int64_t step = 1;      // 1-based, for AdamW bias correction
  float grad_scale = 1.0f;  // grad is multiplied by this first (global-norm clipping,
                            // micro-batch averaging); see kernels/ops/optimizer.h
};

struct ProbeAttrs {
  uint64_t seed = 0;   // kRademacher: the Philox key
  double alpha = 1.0;  // kProbeProduct: Y = α·(β·A + U ⊙ HV)
  double beta = 0.0;   // 0: A is not read
};

struct OpDesc {
  Op op = Op::kMatmul;
  DType dtype = DType::kF32;  // dtype of the principal inputs
  MatmulAttrs matmul;
  AttentionAttrs attention;
  LayerNormAttrs layernorm;
  RopeAttrs rope;
  CrossEntropyAttrs cross_entropy;
  OptimizerAttrs optimizer;
  ProbeAttrs probe;

  std::string DebugString() const;  // "attention_fwd(bf16, causal=1)"
};

}  // namespace flashtick
