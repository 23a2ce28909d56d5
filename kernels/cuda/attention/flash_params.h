// Parameters of the Flash attention kernels (POD, host-visible, no CUDA headers) and
// their entry points. The host launchers (attention_{fwd,bwd}_launch.cc) validate
// the tensors, fill these structs and call the entry points, which pick the compiled
// variant (head dim × dtype × causal) and enqueue the kernels on `stream`; the entry
// points return the launch error and never synchronise.
// Layouts (kernels/ops/attention.h): Q O dO dQ [B, T, H, D], K V dK dV [B, T, Hkv, D],
// strides in elements with a contiguous last dim; L (natural-log LSE) and Dvec fp32
// [B, H, T] contiguous.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/tensor.h"

namespace flashtick::cuda::flash {

// One [B, T, heads, D] tensor: device pointer and strides in elements.
struct BthdArg {
  void* ptr = nullptr;
  int64_t batch_stride = 0, row_stride = 0, head_stride = 0;
};

struct AttentionFwdParams {
  BthdArg q, k, v, o;
  float* lse = nullptr;  // [B, H, T]
  int B = 0, T = 0, H = 0, Hkv = 0, D = 0;
  int group = 1;           // H / Hkv: query head h reads K/V head h / group
  float scale = 0.0f;      // softmax scale, > 0
  float scale_log2 = 0.0f; // scale · log2(e): exp(scale·s − m) = exp2(scale_log2·s − m')
  bool causal = false;
  DType dtype = DType::kBF16;  // kBF16 or kF16
  // Split-KV (flash-decoding applied to the whole forward): with num_splits > 1 the
  // grid gains a z dimension, CTA (·, ·, s) attends to key blocks [s·split_blocks,
  // (s+1)·split_blocks) only and writes its rows' normalised fp32 O and their LSE over
  // those keys to o_part [num_splits, B, H, T, D] and lse_part [num_splits, B, H, T]
  // (−inf: no visible key in the split); a combine kernel then writes O and L:
  //   L = log Σ_s exp(L_s),  O = Σ_s exp(L_s − L) · O_s.
  // Used when B·H·(query blocks) would leave SMs idle while the causal diagonal's
  // longest rows run alone (FlashFwdNumSplits, flash_host.h).
  int num_splits = 1;
  int split_blocks = 0;       // key blocks per split
  float* o_part = nullptr;
  float* lse_part = nullptr;
};

// A compiled forward variant as the host sees it, read off the traits its launcher
// runs (FlashFwdTileShape, flash_variants.cuh): the tiles drive the host's split
// choice, and the whole of it names the variant in Backend::KernelPath.
struct FlashFwdTiles {
  int head_dim = 0;
  int block_m = 0, block_n = 0;  // query rows per CTA, keys per inner step
  int warps = 0;
  int ctas_per_sm = 0;
  bool split_kv = false;  // the launcher may split the keys (num_splits > 1)
};

struct AttentionBwdParams {
  BthdArg q, k, v, o, dout, dq, dk, dv;
  const float* lse = nullptr;  // [B, H, T], from the forward
  float* dvec = nullptr;       // [B, H, T], D_i = rowsum(dO∘O), written here
  float* dq_accum = nullptr;   // [B, T, H, D] fp32 scratch: dQ/scale summed over key blocks
  int B = 0, T = 0, H = 0, Hkv = 0, D = 0;
  int group = 1;
  float scale = 0.0f;
  float scale_log2 = 0.0f;
  bool causal = false;
  DType dtype = DType::kBF16;
};

// Decode: q, o [B, 1, H, D] against Kcache, Vcache [B, Tk, Hkv, D]; per-chunk partials
// (fp32 scratch) merged by a second kernel (flash_decode_kernel.cuh).
struct AttentionDecodeParams {
  BthdArg q, k, v, o;
  float* part_m = nullptr;  // [B, H, n_chunks] chunk max (exp2 domain)
  float* part_l = nullptr;  // [B, H, n_chunks] chunk sum
  float* part_o = nullptr;  // [B, H, n_chunks, D] chunk's unnormalised output
  int B = 0, Tk = 0, H = 0, Hkv = 0, D = 0;
  int group = 1;
  int n_chunks = 0;          // ceil(Tk / kDecodeChunk)
  float scale_log2 = 0.0f;
  DType dtype = DType::kBF16;
  // Optional [B]: sequence b sees its first kv_len[b] rows (clamped into [1, Tk]), read
  // by the kernels, so Tk may be the cache's capacity (kernels/ops/attention.h).
  const int32_t* kv_len = nullptr;
};

// Head dim 64, 128 and 256 variants (attention_{fwd,bwd}_d{64,128,256}.cu, attention_decode.cu).
template <int kHeadDim>
cudaError_t LaunchFlashFwd(const AttentionFwdParams& p, cudaStream_t stream);
template <int kHeadDim>
cudaError_t LaunchFlashBwd(const AttentionBwdParams& p, cudaStream_t stream);
template <int kHeadDim>
cudaError_t LaunchFlashDecode(const AttentionDecodeParams& p, cudaStream_t stream);
// Keys per decode split (the launcher sizes the partials with it).
inline constexpr int kFlashDecodeChunk = 256;

// The backward's counterpart of FlashFwdTiles, for Backend::KernelPath.
struct FlashBwdTiles {
  int head_dim = 0;
  int block_m = 0, block_n = 0;  // query rows per streamed block, keys per CTA
  int warps = 0;
};

// The variant LaunchFlashFwd / LaunchFlashBwd run for a head dim, as read off the same
// traits (flash_variants.cuh defines launcher and shape from one traits alias).
template <int kHeadDim>
FlashFwdTiles FlashFwdTileShape();
template <int kHeadDim>
FlashBwdTiles FlashBwdTileShape();

}  // namespace flashtick::cuda::flash
