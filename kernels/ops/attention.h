// Attention ops: forward, backward, backward-over-backward, decode.
// Per head, scale = 1/sqrt(D) unless given; causal: key j is visible to query i iff j <= i
// (queries and keys share positions 0..T-1). Grouped-query attention: query head h
// reads K/V head h / (H / Hkv).
//
// Forward (FlashAttention-2, Alg. 1):
//   S = scale·Q Kᵀ;  P = softmax_rows(S);  O = P V;  L_i = logsumexp_j S_ij
// Backward (FlashAttention-2, Alg. 2; cotangent dO):
//   D_i = Σ_d dO_id O_id;  dP = dO Vᵀ;  dS = P∘(dP − D);
//   dV = Pᵀ dO;  dQ = scale·dS K;  dK = scale·dSᵀ Q
// Backward-over-backward (docs/derivations/attention_bwd_bwd.md; cotangents gQ gK gV
// of dQ dK dV):
//   G = scale·(gQ Kᵀ + Q gKᵀ);  c_i = Σ_j P_ij G_ij
//   H = (dP − D)∘G − c·dP + dO gVᵀ;  e_i = Σ_j P_ij H_ij
//   ∂dO = P gV + (P∘G) V − c_i O_i;   ∂V = (P∘(G − c))ᵀ dO
//   ∂S = P∘(H − e);  ∂Q = scale·(dS gK + ∂S K);  ∂K = scale·(dSᵀ gQ + ∂Sᵀ Q)
//
// Layouts. Q, O, dO, dQ, gQ, ∂Q, ∂dO: [B, T, H, D]; K, V, dK, dV, gK, gV, ∂K, ∂V:
// [B, T, Hkv, D]. The last dim is contiguous; B, T and H strides are free (so Q, K, V
// can be slices of one fused projection, or torch's [B, H, T, D]). Row statistics
// L (log-sum-exp, natural log), D, c, e: fp32 [B, H, T] contiguous.
// dtypes: CPU f32/f64 (all tensors one dtype, statistics in that dtype too);
// CUDA bf16/f16 in and out, fp32 statistics, fp32 accumulation.
// D (head dim) ∈ {16, 32, 64, 96, 128, 256} on CUDA for every op here (16, 32, 96
// zero-padded onto the 64/128 kernels, docs/kernels/head_dims.md); any D on CPU. Any T ≥ 1.
//
// Inputs / outputs by op (order is the contract):
//   kAttentionFwd     in:  Q, K, V                      out: O, L
//   kAttentionBwd     in:  Q, K, V, O, dO, L            out: dQ, dK, dV, Dvec
//                     (Dvec = rowsum(dO∘O) is written so bwd_bwd can reuse it)
//   kAttentionBwdBwd  in:  Q, K, V, O, dO, L, Dvec, gQ, gK, gV
//                     out: ∂Q, ∂K, ∂V, ∂dO
//   kAttentionDecode  in:  q [B,1,H,D], Kcache, Vcache [B,Tk,Hkv,D] (first Tk rows valid)
//                          [, work: fp32, ≥ AttentionDecodeWorkFloats(B, H, Tk, D)
//                           [, kv_length: int32 [B]]]
//                     out: o [B,1,H,D]   (the new query sees every cached key)
//                     kv_length (optional; pass an empty work view to give it alone):
//                     sequence b sees only its first kv_length[b] cached rows, read
//                     from the backend's memory when the op runs, so Tk may be the
//                     cache's capacity and a decode step keeps the same arguments from
//                     one step to the next (kernels/ops/kv_cache.h). Each length must be
//                     in [1, Tk]: the CPU refuses others, CUDA clamps them into range.
//                     work (optional) is device memory the backend may keep its partial
//                     results in instead of allocating them each call, so a decode step
//                     allocates nothing (model/decode_state.h owns one); a backend that
//                     needs none ignores it, and one too small is not used.
// Gradients with respect to K/V under GQA are summed over the query heads of a group.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/ops/op_desc.h"
#include "kernels/tensor.h"

namespace flashtick {

struct AttentionShape {
  int64_t B = 0, T = 0, H = 0, Hkv = 0, D = 0;
};

// Validates the shapes, dtypes and strides of an attention op's tensors (shared by
// every backend, so they reject bad input the same way) and returns B, T, H, Hkv, D.
absl::Status CheckAttentionArgs(const TensorView& q, const TensorView& k, const TensorView& v,
                                AttentionShape* shape);

// The row-statistics dtype (L, Dvec, c, e) for a run in `data` dtype: fp32 for
// bf16/f16 runs, otherwise the data dtype itself (CPU f32/f64).
DType AttentionStatsDType(DType data);

// The softmax scale the attrs ask for: attrs.scale, or 1/sqrt(D) when it is 0.
double AttentionScale(const AttentionAttrs& attrs, int64_t head_dim);

// Checks that `t` (named `name` in the message) is a [B, T, heads, D] tensor of `dtype`
// with a contiguous last dim; B/T/heads strides are free.
absl::Status CheckAttentionTensor(const char* name, const TensorView& t, int64_t B, int64_t T,
                                  int64_t heads, int64_t D, DType dtype);

// Checks that `t` is a contiguous [B, H, T] row-statistics tensor of `dtype`.
absl::Status CheckAttentionStats(const char* name, const TensorView& t, const AttentionShape& s,
                                 DType dtype);

// Checks the input and output counts of an op against its contract above (decode: 3
// inputs, 4 with its workspace, 5 with its kv_length).
absl::Status CheckAttentionArity(Op op, size_t inputs, size_t outputs);

// Keys per split of a decode (the CUDA kernel's chunk: kernels/cuda/attention/
// flash_params.h kFlashDecodeChunk equals it), and the fp32 elements of decode's
// optional workspace for B·H queries over Tk keys: m, l and the D outputs of every
// (b, h, chunk) partial.
inline constexpr int64_t kAttentionDecodeChunk = 256;
inline constexpr int64_t AttentionDecodeWorkFloats(int64_t B, int64_t H, int64_t Tk, int64_t D) {
  return B * H * ((Tk + kAttentionDecodeChunk - 1) / kAttentionDecodeChunk) * (2 + D);
}

// Decode: q [B, 1, H, D] against Kcache, Vcache [B, Tk, Hkv, D] (Tk ≥ 1 = the cached
// rows; pass a view sliced to the valid rows). Returns B, T = Tk, H, Hkv, D.
absl::Status CheckAttentionDecodeArgs(const TensorView& q, const TensorView& k,
                                      const TensorView& v, AttentionShape* shape);

// Decode's optional kv_length (in[4]) after checking it (int32, ≥ B elements); nullptr
// when the op was given none.
absl::Status DecodeKvLengthInput(absl::Span<const TensorView> in, int64_t B,
                                 const TensorView** kv_length);

// FLOPs by the FlashAttention convention (a matmul n×k·k×m is 2nkm; halved if causal):
// forward 4·B·H·T²·D; backward 2.5× forward; backward-over-backward: see bench/bob.
double AttentionFwdFlops(const AttentionShape& s, bool causal);
double AttentionBwdFlops(const AttentionShape& s, bool causal);

}  // namespace flashtick
