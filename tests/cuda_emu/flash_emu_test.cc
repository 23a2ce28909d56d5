// The CUDA Flash attention kernels (forward, and the backward's three kernels), with
// the production traits of kernels/cuda/attention/flash_variants.cuh, run on the CPU
// emulator (emu_intrinsics.h) and checked like the GPU parity test: against the fp64
// CPU reference with the FlashAttention bound (max error ≤ 2× that of the naive bf16/
// fp16 implementation, plus 4 fp32 half-ulps) and finite outputs. Shapes cover T = 1,
// ragged last tiles, causal tiles above the diagonal, GQA, D ∈ {64, 128, 256}, B·H > 1 and
// Q/K/V strided as slices of one fused [B, T, 3, H, D] buffer.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/attention_dispatch.h"
#include "kernels/common/half.h"
#include "kernels/cpu/attention_naive.h"
#include "kernels/cuda/attention/flash_host.h"
#include "kernels/cuda/attention/flash_variants.cuh"
#include "kernels/cuda/attention/sm90/flash_bwd_sm90.cuh"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.cuh"
#include "kernels/cuda/cuda_ops.h"

namespace flashtick {
namespace {

using cuda::flash::AttentionBwdParams;
using cuda::flash::AttentionFwdParams;
using cuda::flash::BthdArg;

struct Shape {
  int B, T, H, Hkv, D;
  bool causal;
};

// A [B, T, heads, D] tensor in 16-bit storage; fused layouts share one buffer.
struct Dev16 {
  std::vector<uint16_t>* buf;
  int64_t offset, sb, st, sh;
  BthdArg Arg() const { return BthdArg{buf->data() + offset, sb, st, sh}; }
};

template <typename Elem>
uint16_t To16(double x) {
  return std::is_same_v<Elem, __nv_bfloat16> ? DoubleToBf16Bits(x) : DoubleToHalfBits(x);
}
template <typename Elem>
double From16(uint16_t h) {
  return std::is_same_v<Elem, __nv_bfloat16> ? Bf16BitsToFloat(h) : HalfBitsToFloat(h);
}

// Standard normal values exact in bf16 and fp16, so the kernels read exactly the values
// the fp64 reference uses (as tests/parity/cases_attention.cc does).
double Exact16(double x) { return cpu::RoundTo(DType::kF16, cpu::RoundTo(DType::kBF16, x)); }

std::vector<double> Normal(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(0.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = Exact16(d(rng));
  return v;
}

// Writes logical [B, T, heads, D] values into a strided 16-bit view and reads them back.
template <typename Elem>
void Put(const Dev16& t, const Shape& s, int heads, const std::vector<double>& x) {
  for (int b = 0; b < s.B; ++b)
    for (int i = 0; i < s.T; ++i)
      for (int h = 0; h < heads; ++h)
        for (int d = 0; d < s.D; ++d)
          (*t.buf)[t.offset + b * t.sb + i * t.st + h * t.sh + d] = To16<Elem>(x[((b * s.T + i) * heads + h) * s.D + d]);
}
template <typename Elem>
std::vector<double> Get(const Dev16& t, const Shape& s, int heads) {
  std::vector<double> x(static_cast<size_t>(s.B) * s.T * heads * s.D);
  for (int b = 0; b < s.B; ++b)
    for (int i = 0; i < s.T; ++i)
      for (int h = 0; h < heads; ++h)
        for (int d = 0; d < s.D; ++d)
          x[((b * s.T + i) * heads + h) * s.D + d] = From16<Elem>((*t.buf)[t.offset + b * t.sb + i * t.st + h * t.sh + d]);
  return x;
}

// Q, K, V in one fused [B, T, 3, H, D] buffer (K, V use Hkv of their H slots).
struct FusedQkv {
  std::vector<uint16_t> buf;
  Dev16 q, k, v;
  explicit FusedQkv(const Shape& s) : buf(static_cast<size_t>(s.B) * s.T * 3 * s.H * s.D, 0x7fc0) {
    const int64_t st = 3LL * s.H * s.D, sb = st * s.T;
    q = {&buf, 0, sb, st, s.D};
    k = {&buf, int64_t{s.H} * s.D, sb, st, s.D};
    v = {&buf, 2LL * s.H * s.D, sb, st, s.D};
  }
};

Dev16 Dense(std::vector<uint16_t>& buf, const Shape& s, int heads) {
  buf.assign(static_cast<size_t>(s.B) * s.T * heads * s.D, 0x7fc0);  // NaN until written
  return {&buf, 0, int64_t{s.T} * heads * s.D, int64_t{heads} * s.D, s.D};
}

// Max |x − ref| over finite references; counts non-finite x.
double MaxErr(const std::vector<double>& x, const std::vector<double>& ref, int* nonfinite) {
  double m = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(x[i])) ++*nonfinite;
    else m = std::max(m, std::fabs(x[i] - ref[i]));
  }
  return m;
}

void ExpectBound(const char* name, const std::vector<double>& got, const std::vector<double>& naive,
                 const std::vector<double>& ref) {
  int nonfinite = 0, unused = 0;
  const double err = MaxErr(got, ref, &nonfinite), naive_err = MaxErr(naive, ref, &unused);
  double max_ref = 1.0;
  for (double r : ref) max_ref = std::max(max_ref, std::fabs(r));
  EXPECT_EQ(nonfinite, 0) << name;
  // The parity harness's bound: 2× naive plus 2^-18·max(1, max|ref|) of fp32 noise.
  EXPECT_LE(err, 2 * naive_err + 0x1p-18 * max_ref) << name << ": err " << err << " naive " << naive_err;
}

// Traits of the sm_90a wgmma forward (kernels/cuda/attention/sm90/flash_fwd_sm90.cuh).
template <typename Traits>
constexpr bool kIsSm90 = requires { Traits::kWarpgroups; };

// The forward as RunFlashFwd enqueues it; with p.num_splits > 1 the split kernel over
// a z dimension of splits, then the combine. sm_90a traits: the wgmma kernel alone.
template <typename Traits, typename Elem, bool kCausal>
void EmuForward(const AttentionFwdParams& p) {
  const dim3 grid{static_cast<unsigned>(p.B * p.H),
                  static_cast<unsigned>((p.T + Traits::kBlockM - 1) / Traits::kBlockM),
                  static_cast<unsigned>(std::max(1, p.num_splits))};
  if constexpr (kIsSm90<Traits>) {
    emu::Launch({grid.x, grid.y, 1}, Traits::kNThreads, Traits::kSmemBytes, [&] {
      if constexpr (Traits::kOverlap)
        cuda::sm90::flash_fwd_sm90_overlap_kernel<Traits, Elem, kCausal>(p);
      else
        cuda::sm90::flash_fwd_sm90_kernel<Traits, Elem, kCausal>(p);
    });
  } else {
    emu::Launch({grid.x, grid.y, grid.z}, Traits::kNThreads, Traits::kSmemBytes, [&] {
      if (p.num_splits > 1) {
        cuda::flash::flash_fwd_kernel<Traits, Elem, kCausal, true>(p);
      } else {
        cuda::flash::flash_fwd_kernel<Traits, Elem, kCausal>(p);
      }
    });
    if (p.num_splits <= 1) return;
    constexpr int kWarps = cuda::flash::kCombineWarps;
    const int64_t rows = int64_t{p.B} * p.H * p.T;
    emu::Launch({static_cast<unsigned>((rows + kWarps - 1) / kWarps), 1, 1}, kWarps * 32, 0,
                [&] { cuda::flash::flash_fwd_combine_kernel<Elem, Traits::kHeadDim>(p); });
  }
}

// The backward as its launcher enqueues it: the row kernel (D, and dQ_acc zeroed), the
// main kernel (FA2's, or the sm_90a wgmma one for sm_90a traits), the dQ conversion.
template <typename Traits, typename Elem, bool kCausal>
void EmuBackward(const AttentionBwdParams& p) {
  constexpr int kRowWarps = cuda::flash::kRowKernelWarps;
  const unsigned row_blocks = static_cast<unsigned>((int64_t{p.B} * p.T * p.H + kRowWarps - 1) / kRowWarps);
  emu::Launch({row_blocks, 1, 1}, kRowWarps * 32, 0,
              [&] { cuda::flash::flash_bwd_dot_do_o_kernel<Elem, Traits::kHeadDim>(p); });
  emu::Launch({static_cast<unsigned>(p.B * p.Hkv),
               static_cast<unsigned>((p.T + Traits::kBlockN - 1) / Traits::kBlockN), 1},
              Traits::kNThreads, Traits::kSmemBytes, [&] {
                if constexpr (kIsSm90<Traits>)
                  cuda::sm90::flash_bwd_sm90_kernel<Traits, Elem, kCausal>(p);
                else
                  cuda::flash::flash_bwd_kernel<Traits, Elem, kCausal>(p);
              });
  emu::Launch({row_blocks, 1, 1}, kRowWarps * 32, 0,
              [&] { cuda::flash::flash_bwd_convert_dq_kernel<Elem, Traits::kHeadDim>(p); });
}

// split_blocks > 0: the forward runs split-KV with that many key blocks a split (the
// backward is the same either way and runs only when split_blocks == 0).
template <typename FwdTraits, typename BwdTraits, typename Elem, bool kCausal>
void RunCase(const Shape& s, int split_blocks = 0) {
  SCOPED_TRACE(testing::Message() << "B=" << s.B << " T=" << s.T << " H=" << s.H << " Hkv=" << s.Hkv
                                  << " D=" << s.D << " causal=" << s.causal
                                  << " split_blocks=" << split_blocks
                                  << (std::is_same_v<Elem, __nv_bfloat16> ? " bf16" : " fp16"));
  const DType dt = std::is_same_v<Elem, __nv_bfloat16> ? DType::kBF16 : DType::kF16;
  const AttentionShape as{s.B, s.T, s.H, s.Hkv, s.D};
  const size_t nq = size_t(s.B) * s.T * s.H * s.D, nk = size_t(s.B) * s.T * s.Hkv * s.D, ns = size_t(s.B) * s.H * s.T;
  const auto q = Normal(nq, 1), k = Normal(nk, 2), v = Normal(nk, 3), dout = Normal(nq, 4);
  cpu::NaiveAttentionOptions ref_opt, naive_opt;
  ref_opt.causal = naive_opt.causal = s.causal;
  naive_opt.emulate = dt;
  std::vector<double> o_ref(nq), l_ref(ns), o_naive(nq), l_naive(ns);
  cpu::NaiveAttentionFwd(as, ref_opt, q.data(), k.data(), v.data(), o_ref.data(), l_ref.data());
  cpu::NaiveAttentionFwd(as, naive_opt, q.data(), k.data(), v.data(), o_naive.data(), l_naive.data());

  const float scale = static_cast<float>(1.0 / std::sqrt(double(s.D)));
  FusedQkv qkv(s);
  Put<Elem>(qkv.q, s, s.H, q);
  Put<Elem>(qkv.k, s, s.Hkv, k);
  Put<Elem>(qkv.v, s, s.Hkv, v);
  std::vector<uint16_t> o_buf;
  const Dev16 o = Dense(o_buf, s, s.H);
  std::vector<float> lse(ns, NAN);
  AttentionFwdParams fp;
  fp.q = qkv.q.Arg(), fp.k = qkv.k.Arg(), fp.v = qkv.v.Arg(), fp.o = o.Arg();
  fp.lse = lse.data();
  fp.B = s.B, fp.T = s.T, fp.H = s.H, fp.Hkv = s.Hkv, fp.D = s.D, fp.group = s.H / s.Hkv;
  fp.scale = scale, fp.scale_log2 = static_cast<float>(scale * 1.4426950408889634);
  fp.causal = s.causal, fp.dtype = dt;
  std::vector<float> o_part, lse_part;
  if (split_blocks > 0) {
    const int key_blocks = (s.T + FwdTraits::kBlockN - 1) / FwdTraits::kBlockN;
    fp.split_blocks = split_blocks;
    fp.num_splits = (key_blocks + split_blocks - 1) / split_blocks;
    ASSERT_GT(fp.num_splits, 1) << "a split case must split";
    o_part.assign(size_t(fp.num_splits) * ns * s.D, NAN);  // NaN until written: the
    lse_part.assign(size_t(fp.num_splits) * ns, NAN);      // combine must not read unwritten O
    fp.o_part = o_part.data(), fp.lse_part = lse_part.data();
  }
  EmuForward<FwdTraits, Elem, kCausal>(fp);
  ExpectBound("O", Get<Elem>(o, s, s.H), o_naive, o_ref);
  ExpectBound("L", std::vector<double>(lse.begin(), lse.end()), l_naive, l_ref);
  if (split_blocks > 0) return;

  // Backward on the fp64 forward's O and L (the op contract's inputs), stored as the
  // kernel reads them: O exact in 16 bits, L in fp32.
  for (auto& x : o_ref) x = Exact16(x);
  for (auto& x : l_ref) x = static_cast<float>(x);
  std::vector<double> dq_ref(nq), dk_ref(nk), dv_ref(nk), d_ref(ns), dq_n(nq), dk_n(nk), dv_n(nk), d_n(ns);
  cpu::NaiveAttentionBwd(as, ref_opt, q.data(), k.data(), v.data(), o_ref.data(), dout.data(),
                         dq_ref.data(), dk_ref.data(), dv_ref.data(), d_ref.data());
  cpu::NaiveAttentionBwd(as, naive_opt, q.data(), k.data(), v.data(), o_ref.data(), dout.data(),
                         dq_n.data(), dk_n.data(), dv_n.data(), d_n.data());
  std::vector<uint16_t> o_in_buf, do_buf, dq_buf, dk_buf, dv_buf;
  const Dev16 o_in = Dense(o_in_buf, s, s.H), dO = Dense(do_buf, s, s.H);
  const Dev16 dq = Dense(dq_buf, s, s.H), dk = Dense(dk_buf, s, s.Hkv), dv = Dense(dv_buf, s, s.Hkv);
  Put<Elem>(o_in, s, s.H, o_ref);
  Put<Elem>(dO, s, s.H, dout);
  std::vector<float> l_in(l_ref.begin(), l_ref.end()), dvec(ns, NAN), dq_accum(nq, NAN);
  AttentionBwdParams bp;
  bp.q = qkv.q.Arg(), bp.k = qkv.k.Arg(), bp.v = qkv.v.Arg(), bp.o = o_in.Arg(), bp.dout = dO.Arg();
  bp.dq = dq.Arg(), bp.dk = dk.Arg(), bp.dv = dv.Arg();
  bp.lse = l_in.data(), bp.dvec = dvec.data(), bp.dq_accum = dq_accum.data();
  bp.B = s.B, bp.T = s.T, bp.H = s.H, bp.Hkv = s.Hkv, bp.D = s.D, bp.group = s.H / s.Hkv;
  bp.scale = fp.scale, bp.scale_log2 = fp.scale_log2, bp.causal = s.causal, bp.dtype = dt;
  EmuBackward<BwdTraits, Elem, kCausal>(bp);
  ExpectBound("dQ", Get<Elem>(dq, s, s.H), dq_n, dq_ref);
  ExpectBound("dK", Get<Elem>(dk, s, s.Hkv), dk_n, dk_ref);
  ExpectBound("dV", Get<Elem>(dv, s, s.Hkv), dv_n, dv_ref);
  ExpectBound("Dvec", std::vector<double>(dvec.begin(), dvec.end()), d_n, d_ref);
}

// The traits the launchers run (LaunchFlashFwd/Bwd instantiate FlashVariant<D>).
using FwdTraitsD64 = cuda::flash::FlashVariant<64>::Fwd;
using BwdTraitsD64 = cuda::flash::FlashVariant<64>::Bwd;
using FwdTraitsD128 = cuda::flash::FlashVariant<128>::Fwd;
using BwdTraitsD128 = cuda::flash::FlashVariant<128>::Bwd;
using FwdTraitsD256 = cuda::flash::FlashVariant<256>::Fwd;
using BwdTraitsD256 = cuda::flash::FlashVariant<256>::Bwd;

TEST(FlashEmuTest, D64Bf16Causal) {
  for (const Shape s : {Shape{1, 1, 1, 1, 64, true}, Shape{2, 37, 2, 1, 64, true}, Shape{1, 200, 1, 1, 64, true}})
    RunCase<FwdTraitsD64, BwdTraitsD64, __nv_bfloat16, true>(s);
}

TEST(FlashEmuTest, D64Bf16NonCausal) {
  for (const Shape s : {Shape{1, 1, 2, 2, 64, false}, Shape{1, 130, 2, 1, 64, false}})
    RunCase<FwdTraitsD64, BwdTraitsD64, __nv_bfloat16, false>(s);
}

TEST(FlashEmuTest, D64Fp16Causal) { RunCase<FwdTraitsD64, BwdTraitsD64, __half, true>({1, 77, 1, 1, 64, true}); }

TEST(FlashEmuTest, D128Bf16Causal) {
  for (const Shape s : {Shape{1, 1, 1, 1, 128, true}, Shape{1, 150, 2, 1, 128, true}})
    RunCase<FwdTraitsD128, BwdTraitsD128, __nv_bfloat16, true>(s);
}

// Split-KV forward: partials over key-block ranges merged by the combine. Causal with
// splits that lie wholly past the diagonal of the first query blocks (their CTAs only
// mark L_s = −inf), a ragged last key block, GQA, B·H > 1; D = 128's 64-key blocks put
// a split boundary inside a 128-row query block, so some rows see no key of a split.
TEST(FlashEmuTest, SplitKvForward) {
  RunCase<FwdTraitsD64, BwdTraitsD64, __nv_bfloat16, true>({1, 300, 1, 1, 64, true}, 1);
  RunCase<FwdTraitsD64, BwdTraitsD64, __nv_bfloat16, true>({2, 260, 2, 1, 64, true}, 2);
  RunCase<FwdTraitsD64, BwdTraitsD64, __half, false>({1, 300, 1, 1, 64, false}, 1);
  RunCase<FwdTraitsD128, BwdTraitsD128, __nv_bfloat16, true>({1, 200, 1, 1, 128, true}, 1);
  RunCase<FwdTraitsD128, BwdTraitsD128, __half, true>({1, 250, 2, 2, 128, true}, 3);
}

// The split choice (flash_host.h): none where the grid fills the GPU, a few where one
// instrument's day leaves SMs idle, bounded, and never for short sequences.
TEST(FlashSplitHeuristic, SplitsOnlyWhereTheGridUnderfillsTheGpu) {
  using cuda::flash::FlashFwdNumSplits;
  const cuda::flash::FlashFwdTiles d64 = cuda::flash::FlashFwdTileShape<64>();
  ASSERT_EQ(d64.block_m, 128);
  ASSERT_EQ(d64.block_n, 128);
  ASSERT_EQ(d64.ctas_per_sm, 2);
  constexpr int kH200Sms = 132;
  EXPECT_EQ(FlashFwdNumSplits(12, 23400, true, d64, kH200Sms), 1);  // the benchmark's B·H
  EXPECT_EQ(FlashFwdNumSplits(1, 512, true, d64, kH200Sms), 1);     // 4 blocks: too short
  const int day = FlashFwdNumSplits(1, 23400, true, d64, kH200Sms);  // 183 blocks, 1 head
  EXPECT_GE(day, 2);
  EXPECT_LE(day, 4);
  EXPECT_GE(FlashFwdNumSplits(1, 23400, false, d64, kH200Sms), 2);
  EXPECT_LE(FlashFwdNumSplits(1, 1 << 20, true, d64, kH200Sms), cuda::flash::kMaxSplits);
  EXPECT_EQ(FlashFwdNumSplits(1, 23400, true, d64, 0), 1);  // no device properties
}

// Backend::KernelPath's forward and backward names come from the shapes the .cu files
// instantiate beside their launchers, read off FlashVariant's traits; these are the
// names reports and stored benchmark results carry, so a change of traits shows here.
TEST(FlashVariantNames, ReadOffTheLaunchedTraits) {
  using namespace cuda::flash;
  EXPECT_EQ(FlashFwdVariantName(FlashFwdTileShape<64>()), "fwd_d64_m128n128w4_splitkv");
  EXPECT_EQ(FlashFwdVariantName(FlashFwdTileShape<128>()), "fwd_d128_m128n64w4_splitkv");
  EXPECT_EQ(FlashBwdVariantName(FlashBwdTileShape<64>()), "bwd_d64_m128n128w8");
  EXPECT_EQ(FlashBwdVariantName(FlashBwdTileShape<128>()), "bwd_d128_m64n128w8");
  EXPECT_EQ(FlashFwdVariantName(FlashFwdTileShape<256>()), "fwd_d256_m64n64w4_splitkv");
  EXPECT_EQ(FlashBwdVariantName(FlashBwdTileShape<256>()), "bwd_d256_m32n64w8");
  static_assert(FwdTraitsD256::kSmemBytes <= 99 * 1024 && FwdTraitsD256::kMinBlocksPerSm == 2);
  static_assert(BwdTraitsD256::kSmemBytes <= BwdTraitsD256::kMaxSmemSm80);
  constexpr FlashFwdTiles fwd = FwdTilesOf<FwdTraitsD128>();
  static_assert(fwd.head_dim == 128 && fwd.block_m == FwdTraitsD128::kBlockM &&
                fwd.block_n == FwdTraitsD128::kBlockN && fwd.warps == FwdTraitsD128::kNWarps);
  constexpr FlashBwdTiles bwd = BwdTilesOf<BwdTraitsD64>();
  static_assert(bwd.head_dim == 64 && bwd.block_m == BwdTraitsD64::kBlockM &&
                bwd.block_n == BwdTraitsD64::kBlockN && bwd.warps == BwdTraitsD64::kNWarps);
}

// Every op runs every head dim of FlashKernelHeadDim, the backward-over-backward
// included (its D = 256 tiles: BobTileShape): Supports() asks per op and says yes at 256,
// the launchers still refuse a head dim none of them runs (24), and the BoB kernel path
// is read off the same tiles BobTraits is built from.
TEST(FlashHeadDims, EveryOpRuns256AndBobSaysWhichHeadDimsItRuns) {
  using namespace cuda::flash;
  static_assert(FlashKernelHeadDim(256) == 256 && FlashRunsHeadDim(256));
  static_assert(FlashBobRunsHeadDim(256) && FlashBobRunsHeadDim(96) && FlashBobRunsHeadDim(16));
  static_assert(!FlashBobRunsHeadDim(24) && !FlashBobRunsHeadDim(512));
  for (Op op : {Op::kAttentionFwd, Op::kAttentionBwd, Op::kAttentionBwdBwd, Op::kAttentionDecode}) {
    EXPECT_TRUE(FlashOpRunsHeadDim(op, 256)) << OpName(op);
    EXPECT_TRUE(FlashOpRunsHeadDim(op, 128)) << OpName(op);
    EXPECT_FALSE(FlashOpRunsHeadDim(op, 24)) << OpName(op);
  }
  constexpr cuda::BobTiles bob = cuda::BobTileShape(256);
  static_assert(bob.head_dim == 256 && bob.block_m == 32 && bob.block_n == 32 && bob.warps == 8);
}

// The launcher and the kernel-path names live in the CUDA backend's host code, linked
// only into builds with the backend (the sanitizer build compiles the emulator without
// it).
#ifdef FLASHTICK_EMU_LINKS_CUDA_BACKEND
TEST(FlashHeadDims, BobLauncherRefuses24AndKernelPathsNameTheTiles) {
  const TensorView x = MakeView(nullptr, DType::kBF16, DeviceKind::kCuda, {1, 8, 2, 24});
  const TensorView stat = MakeView(nullptr, DType::kF32, DeviceKind::kCuda, {1, 2, 8});
  const std::vector<TensorView> in = {x, x, x, x, x, stat, stat, x, x, x}, out = {x, x, x, x};
  OpDesc desc;
  desc.op = Op::kAttentionBwdBwd;
  desc.dtype = DType::kBF16;
  desc.attention.head_dim = 24;
  cuda::CudaContext ctx;
  ctx.sm = 90;
  const absl::Status st = cuda::AttentionBwdBwd(desc, in, out, ctx);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_NE(st.message().find("runs head dims 16, 32, 64, 96, 128 and 256; got 24"), std::string::npos)
      << st;

  EXPECT_EQ(cuda::AttentionKernelPath(desc, 24, ctx), "flash_cuda_unsupported_d24");
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 256, ctx), "flash_cuda_bwd_bwd_d256_m32n32w8_sm90");
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 128, ctx), "flash_cuda_bwd_bwd_d128_m64n64w8_sm90");
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 96, ctx), "flash_cuda_bwd_bwd_d128_m64n64w8_pad96_sm90");
  // D = 64 and what pads onto it: the wgmma passes on compute capability 9.0 (auto).
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 16, ctx), "flash_cuda_bwd_bwd_d64_m64n64wg2_qdoreg_kvreg_pad16_sm90a");
  desc.op = Op::kAttentionFwd;
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 256, ctx), "flash_cuda_fwd_d256_m64n64w4_splitkv_sm90");
  desc.op = Op::kAttentionBwd;
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 256, ctx), "flash_cuda_bwd_d256_m32n64w8_sm90");
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 96, ctx), "flash_cuda_bwd_d128_m64n128w8_pad96_sm90");
}

// flash_sm90a names the wgmma kernels where the launchers run them (compute capability
// 9.0; forward d 64/128 and what pads onto them, backward d 64) and FA2's elsewhere.
TEST(FlashHeadDims, Sm90aKernelPathsNameWhatRuns) {
  SetAttentionImplOverride(AttentionImpl::kFlashSm90a);
  OpDesc desc;
  desc.op = Op::kAttentionFwd;
  desc.dtype = DType::kBF16;
  cuda::CudaContext ctx;
  ctx.sm = 90;
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 64, ctx), "flash_cuda_fwd_d64_m128n64wg2_sm90a");
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 128, ctx), "flash_cuda_fwd_d128_m128n64wg2_sm90a");
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 16, ctx), "flash_cuda_fwd_d64_m128n64wg2_pad16_sm90a");
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 256, ctx), "flash_cuda_fwd_d256_m64n64w4_splitkv_sm90");
  desc.op = Op::kAttentionBwd;
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 64, ctx), "flash_cuda_bwd_d64_m64n128wg2_sm90a");
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 128, ctx), "flash_cuda_bwd_d128_m64n128w8_sm90");
  ctx.sm = 80;  // an A100: the sm_90a code cannot run there
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 64, ctx), "flash_cuda_bwd_d64_m128n128w8_sm80");
  desc.op = Op::kAttentionFwd;
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 64, ctx), "flash_cuda_fwd_d64_m128n128w4_splitkv_sm80");
  SetAttentionImplOverride(std::nullopt);
  ctx.sm = 90;
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 64, ctx), "flash_cuda_fwd_d64_m128n128w4_splitkv_sm90");
}

// The backward-over-backward runs its wgmma passes at D = 64 on compute capability 9.0 in
// every mode but flash (cuDNN has none, and they measured faster); the mma.sync passes
// under flash, at other head dims and on other GPUs.
TEST(FlashHeadDims, BobSm90aKernelPathsNameWhatRuns) {
  OpDesc desc;
  desc.op = Op::kAttentionBwdBwd;
  desc.dtype = DType::kBF16;
  cuda::CudaContext ctx;
  ctx.sm = 90;
  for (const AttentionImpl m : {AttentionImpl::kAuto, AttentionImpl::kCudnn, AttentionImpl::kFlashSm90a}) {
    SetAttentionImplOverride(m);
    EXPECT_EQ(cuda::AttentionKernelPath(desc, 64, ctx), "flash_cuda_bwd_bwd_d64_m64n64wg2_qdoreg_kvreg_sm90a");
    EXPECT_EQ(cuda::AttentionKernelPath(desc, 32, ctx), "flash_cuda_bwd_bwd_d64_m64n64wg2_qdoreg_kvreg_pad32_sm90a");
    EXPECT_EQ(cuda::AttentionKernelPath(desc, 128, ctx), "flash_cuda_bwd_bwd_d128_m64n64w8_sm90");
    EXPECT_TRUE(cuda::BobSm90Chosen(64, DType::kF16, 90));
    EXPECT_FALSE(cuda::BobSm90Chosen(64, DType::kF32, 90));
  }
  SetAttentionImplOverride(AttentionImpl::kFlash);
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 64, ctx), "flash_cuda_bwd_bwd_d64_m64n64w8_sm90");
  EXPECT_FALSE(cuda::BobSm90Chosen(64, DType::kBF16, 90));
  SetAttentionImplOverride(std::nullopt);
  ctx.sm = 80;
  EXPECT_EQ(cuda::AttentionKernelPath(desc, 64, ctx), "flash_cuda_bwd_bwd_d64_m64n64w8_sm80");
  EXPECT_FALSE(cuda::BobSm90Chosen(64, DType::kBF16, 80));
}
#endif  // FLASHTICK_EMU_LINKS_CUDA_BACKEND

TEST(FlashEmuTest, D128Fp16NonCausal) {
  RunCase<FwdTraitsD128, BwdTraitsD128, __half, false>({2, 70, 1, 1, 128, false});
}

// D = 256: 64-row forward blocks copied in 4-row steps (two swizzle phases per thread,
// CopyTileAsync), 32-row backward query blocks under 64-key CTAs. T = 1, ragged tiles
// of both passes, causal blocks above the diagonal, GQA.
TEST(FlashEmuTest, D256Bf16Causal) {
  for (const Shape s : {Shape{1, 1, 1, 1, 256, true}, Shape{1, 130, 2, 1, 256, true}})
    RunCase<FwdTraitsD256, BwdTraitsD256, __nv_bfloat16, true>(s);
}

TEST(FlashEmuTest, D256Fp16NonCausal) {
  RunCase<FwdTraitsD256, BwdTraitsD256, __half, false>({1, 77, 2, 2, 256, false});
}

// Split-KV at D = 256: one 64-key block a split, so the splits past the diagonal of the
// first query blocks only mark L_s = −inf, and a ragged last key block.
TEST(FlashEmuTest, D256SplitKvForward) {
  RunCase<FwdTraitsD256, BwdTraitsD256, __nv_bfloat16, true>({1, 150, 1, 1, 256, true}, 1);
  RunCase<FwdTraitsD256, BwdTraitsD256, __half, false>({1, 200, 2, 1, 256, false}, 2);
}

}  // namespace
}  // namespace flashtick

namespace flashtick {
namespace {

// The sm_90a forward (wgmma, kernels/cuda/attention/sm90/flash_fwd_sm90.cuh) with one and
// two warpgroups a CTA, D = 64 and 128: T = 1, ragged tiles, causal blocks that one
// warpgroup sees whole and the other masked, GQA, fused Q/K/V, B·H > 1, bf16 and fp16.
using FwdSm90D64x1 = cuda::sm90::FlashFwdSm90Traits<64, 1>;
using FwdSm90D64x2 = cuda::sm90::FlashFwdSm90Traits<64, 2>;
using BwdSm90D64x1 = cuda::sm90::FlashBwdSm90Traits<64, 1>;
using BwdSm90D64x2 = cuda::sm90::FlashBwdSm90Traits<64, 2>;

// Forward and backward (the wgmma backward: Sᵀ and dPᵀ per warpgroup of keys, dQ by
// atomics) against the fp64 reference.
TEST(FlashEmuSm90Test, D64Bf16Causal) {
  for (const Shape s : {Shape{1, 1, 1, 1, 64, true}, Shape{2, 37, 2, 1, 64, true},
                        Shape{1, 200, 1, 1, 64, true}})
    RunCase<FwdSm90D64x2, BwdSm90D64x2, __nv_bfloat16, true>(s);
  RunCase<FwdSm90D64x1, BwdSm90D64x1, __nv_bfloat16, true>({1, 150, 2, 2, 64, true});
}

TEST(FlashEmuSm90Test, D64NonCausal) {
  RunCase<FwdSm90D64x2, BwdSm90D64x2, __nv_bfloat16, false>({2, 130, 4, 2, 64, false});
  RunCase<FwdSm90D64x1, BwdSm90D64x1, __half, false>({1, 77, 1, 1, 64, false});
}

TEST(FlashEmuSm90Test, D64Fp16Causal) {
  RunCase<FwdSm90D64x2, BwdSm90D64x2, __half, true>({1, 257, 2, 1, 64, true});
}

// D = 128: two 64-column blocks per tile, S over eight k16 steps, O as two m64n64 halves.
using FwdSm90D128x2 = cuda::sm90::FlashFwdSm90Traits<128, 2>;

TEST(FlashEmuSm90Test, D128) {
  RunCase<FwdSm90D128x2, BwdTraitsD128, __nv_bfloat16, true>({2, 150, 2, 1, 128, true});
  RunCase<FwdSm90D128x2, BwdTraitsD128, __half, false>({1, 77, 2, 2, 128, false});
  RunCase<FwdSm90D128x2, BwdTraitsD128, __nv_bfloat16, true>({1, 1, 1, 1, 128, true});
}

// The forward with the softmax overlapped with the previous block's P·V (double-buffered
// K and V, two commit groups a block): the same shapes — T = 1, a single key block,
// ragged tiles, causal blocks one warpgroup sees whole and the other masked, GQA,
// non-causal, fp16, D = 128. The emulator's wgmma runs asynchronously, so reading S before
// its wait, or rescaling O while P·V is in flight, fails here.
using FwdSm90D64x2Ov = cuda::sm90::FlashFwdSm90Traits<64, 2, true>;
using FwdSm90D64x1Ov = cuda::sm90::FlashFwdSm90Traits<64, 1, true>;
using FwdSm90D128x2Ov = cuda::sm90::FlashFwdSm90Traits<128, 2, true>;

TEST(FlashEmuSm90Test, OverlapForward) {
  for (const Shape s : {Shape{1, 1, 1, 1, 64, true}, Shape{2, 37, 2, 1, 64, true},
                        Shape{1, 200, 1, 1, 64, true}})
    RunCase<FwdSm90D64x2Ov, BwdSm90D64x2, __nv_bfloat16, true>(s);
  RunCase<FwdSm90D64x1Ov, BwdSm90D64x1, __nv_bfloat16, true>({1, 150, 2, 2, 64, true});
  RunCase<FwdSm90D64x2Ov, BwdSm90D64x2, __half, false>({2, 130, 4, 2, 64, false});
  RunCase<FwdSm90D128x2Ov, BwdTraitsD128, __nv_bfloat16, true>({2, 150, 2, 1, 128, true});
  RunCase<FwdSm90D128x2Ov, BwdTraitsD128, __half, false>({1, 77, 2, 2, 128, false});
}

}  // namespace
}  // namespace flashtick
