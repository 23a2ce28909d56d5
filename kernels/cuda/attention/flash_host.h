// Host-side checks shared by the Flash attention launchers: which variants exist
// (bf16/fp16, D ∈ {16, 32, 64, 96, 128, 256}; others are Unimplemented so callers and parity tests see
// SKIP, not a failure) and the layout the kernels assume (device pointers, 16-byte
// aligned rows for cp.async, strides in multiples of 8 elements). Host-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cuda/attention/bwd_bwd/bob_params.h"
#include "kernels/cuda/attention/flash_params.h"
#include "kernels/ops/attention.h"

namespace flashtick::cuda::flash {

inline constexpr double kLog2eHost = 1.4426950408889634;  // scale_log2 = scale · log2 e
inline constexpr int kRowAlignElems = 8;                   // 16 bytes of 16-bit elements

// The head dim whose kernels run a call of head dim D: D itself for 64, 128 and 256
// (the forward and backward tiles are built for those), 64 for 16 and 32, 128 for 96
// (run zero-padded, head_dim_padding.h); 0 for a head dim the CUDA attention does not
// take. Decode has kernels for all six (flash_decode_kernel.cuh).
inline constexpr int FlashKernelHeadDim(int64_t D) {
  return D == 64 || D == 16 || D == 32 ? 64 : D == 128 || D == 96 ? 128 : D == 256 ? 256 : 0;
}
inline constexpr bool FlashRunsHeadDim(int64_t D) { return FlashKernelHeadDim(D) != 0; }
inline constexpr char kFlashHeadDimsText[] = "16, 32, 64, 96, 128 and 256";

// The backward-over-backward (bwd_bwd/) has tiles for every kernel head dim: 64 × 64 at
// D = 64 and 128, 32 × 32 at D = 256 (BobTileShape, bob_params.h: 64 × 64 at D = 256
// would need 256 KB of shared memory and 256 accumulator registers a thread). So it
// runs the head dims the forward and backward run. Supports() and the BoB launcher ask
// this predicate, kept apart from FlashRunsHeadDim so the two can differ again.
inline constexpr bool FlashBobRunsHeadDim(int64_t D) {
  const int kd = FlashKernelHeadDim(D);
  return kd == 64 || kd == 128 || kd == 256;
}
inline constexpr char kFlashBobHeadDimsText[] = "16, 32, 64, 96, 128 and 256";

// Whether the CUDA backend runs `op` at head dim D (0: the caller did not say), and the
// head dims it runs for the op, for refusal messages.
inline constexpr bool FlashOpRunsHeadDim(Op op, int64_t D) {
  return D == 0 || (op == Op::kAttentionBwdBwd ? FlashBobRunsHeadDim(D) : FlashRunsHeadDim(D));
}
inline constexpr const char* FlashOpHeadDimsText(Op op) {
  return op == Op::kAttentionBwdBwd ? kFlashBobHeadDimsText : kFlashHeadDimsText;
}

inline absl::Status CheckFlashVariant(const char* op, const AttentionShape& s, DType dtype) {
  if (dtype != DType::kBF16 && dtype != DType::kF16)
    return absl::UnimplementedError(absl::StrCat("flash_cuda: ", op, " runs in bf16 or fp16, not ",
                                                 DTypeName(dtype)));
  if (!FlashRunsHeadDim(s.D))
    return absl::UnimplementedError(absl::StrCat("flash_cuda: ", op, " runs head dims ", kFlashHeadDimsText,
                                                 ", not ", s.D, "; use the CPU backend for other head dims"));
  // Grids put the row/key blocks of T in y (≤ 65535 blocks of ≥ 128 rows) and B·H in x.
  if (s.T > (int64_t{1} << 22) || s.B > 65535 || s.H > 65535)
    return absl::InvalidArgumentError(absl::StrCat("flash_cuda: ", op, " supports T ≤ 4,194,304 and B, H ≤ 65535; got B=",
                                                   s.B, " T=", s.T, " H=", s.H));
  return absl::OkStatus();
}

// A [B, T, heads, D] view the kernels can read with 16-byte cp.async.
inline absl::Status CheckFlashLayout(const char* name, const TensorView& t) {
  if (t.device != DeviceKind::kCuda)
    return absl::InvalidArgumentError(absl::StrCat("flash_cuda: ", name, " is not on the GPU"));
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
    return absl::InvalidArgumentError(absl::StrCat("flash_cuda: ", name, " must be 16-byte aligned"));
  for (int i = 0; i < 3; ++i)
    if (t.stride(i) % kRowAlignElems != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "flash_cuda: the B, T and head strides of ", name, " must be multiples of 8 elements; got ",
          t.stride(0), ", ", t.stride(1), ", ", t.stride(2)));
  return absl::OkStatus();
}

// How many key splits the forward runs with (AttentionFwdParams::num_splits). A CTA
// of query block i walks n_i key blocks (n_i grows along the causal diagonal); with
// `slots` = num_sms · ctas_per_sm resident CTAs, the forward takes about
//   max(max_i n_i, Σ_i n_i · B·H / slots)
// block steps: when B·H is small (serving one instrument: B = H = 1) the first term
// wins and most SMs idle while the last query blocks run alone. Splitting the keys in
// s parts bounds a CTA at ⌈max n / s⌉ steps, at the price of fp32 partials (s·B·H·T·
// (D+1)·4 bytes) and a combine pass; s is the fewest splits that bring the longest
// CTA down to the balanced figure, with at least kMinSplitBlocks steps a split (short
// rows are not worth a combine) and at most kMaxSplits. 1 when the grid already fills
// the GPU, e.g. the benchmark's B·H = 12 at any N.
inline constexpr int kMinSplitBlocks = 8;
inline constexpr int kMaxSplits = 16;

inline int FlashFwdNumSplits(int64_t batch_heads, int64_t T, bool causal, const FlashFwdTiles& tiles,
                             int num_sms) {
  if (num_sms <= 0 || tiles.block_m <= 0 || tiles.block_n <= 0 || T <= 0) return 1;
  const int64_t m_blocks = (T + tiles.block_m - 1) / tiles.block_m;
  const int64_t all_keys = (T + tiles.block_n - 1) / tiles.block_n;
  int64_t longest = 0, steps = 0;
  for (int64_t i = 0; i < m_blocks; ++i) {
    const int64_t key_end = causal ? std::min(T, (i + 1) * tiles.block_m) : T;
    const int64_t n = causal ? (key_end + tiles.block_n - 1) / tiles.block_n : all_keys;
    longest = std::max(longest, n);
    steps += n;
  }
  const int64_t slots = int64_t{num_sms} * std::max(1, tiles.ctas_per_sm);
  const int64_t balanced = (steps * batch_heads + slots - 1) / slots;
  // Within 25% of balanced already: splitting would add a pass for little.
  if (4 * longest <= 5 * balanced) return 1;
  const int64_t per_split = std::max<int64_t>(balanced, kMinSplitBlocks);
  const int64_t splits = (longest + per_split - 1) / per_split;
  return static_cast<int>(std::clamp<int64_t>(splits, 1, kMaxSplits));
}

// Names of a forward and a backward variant, read off its shape (FlashFwdTileShape,
// FlashBwdTileShape): "fwd_d64_m128n128w4_splitkv", "bwd_d64_m128n128w8".
inline std::string FlashFwdVariantName(const FlashFwdTiles& t) {
  return absl::StrCat("fwd_d", t.head_dim, "_m", t.block_m, "n", t.block_n, "w", t.warps,
                      t.split_kv ? "_splitkv" : "");
}
inline std::string FlashBwdVariantName(const FlashBwdTiles& t) {
  return absl::StrCat("bwd_d", t.head_dim, "_m", t.block_m, "n", t.block_n, "w", t.warps);
}
// "bwd_bwd_d256_m32n32w8": the FlashBoB tiles of both passes (BobTileShape).
inline std::string FlashBobVariantName(const BobTiles& t) {
  return absl::StrCat("bwd_bwd_d", t.head_dim, "_m", t.block_m, "n", t.block_n, "w", t.warps);
}

inline BthdArg ToArg(const TensorView& t) {
  return BthdArg{t.data, t.stride(0), t.stride(1), t.stride(2)};
}

// scale and scale·log2 e; the kernels' −inf guards assume scale > 0.
inline absl::Status FlashScale(const AttentionAttrs& attrs, int64_t D, float* scale, float* scale_log2) {
  const double s = AttentionScale(attrs, D);
  if (!(s > 0.0))
    return absl::InvalidArgumentError(absl::StrCat("flash_cuda: the softmax scale must be positive; got ", s));
  *scale = static_cast<float>(s);
  *scale_log2 = static_cast<float>(s * kLog2eHost);
  return absl::OkStatus();
}

}  // namespace flashtick::cuda::flash
