// The CUDA decode kernels (kernels/cuda/attention/flash_decode_kernel.cuh) on the CPU
// emulator: decode(q = Q[:, T−1], Kcache = K, Vcache = V) must equal row T−1 of the
// causal forward, within the FlashAttention bound against the naive bf16/fp16 forward.
// Caches read through strided views (K, V as slices of one [B, Tk, 2, Hkv, D] buffer);
// Tk = 1, a partial last chunk, several chunks; GQA; D ∈ {16, 32, 64, 96, 128, 256}.
// With a capacity, the caches have more rows than keys and kv_len says how many count
// (how a captured decode step runs): the rows past it hold NaN, so reading one fails.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/half.h"
#include "kernels/cpu/attention_naive.h"
#include "kernels/cuda/attention/flash_decode_kernel.cuh"

namespace flashtick {
namespace {

struct DecodeShape {
  int B, Tk, H, Hkv, D;
  int capacity = 0;  // > Tk: caches of this many rows, the first Tk given by kv_len
};

template <typename Elem>
void RunDecode(const DecodeShape& s) {
  SCOPED_TRACE(testing::Message() << "B=" << s.B << " Tk=" << s.Tk << " H=" << s.H << " Hkv=" << s.Hkv
                                  << " D=" << s.D << " capacity=" << s.capacity);
  const int C = std::max(s.capacity, s.Tk);  // cache rows
  constexpr bool kBf16 = std::is_same_v<Elem, __nv_bfloat16>;
  const DType dt = kBf16 ? DType::kBF16 : DType::kF16;
  const AttentionShape as{s.B, s.Tk, s.H, s.Hkv, s.D};
  const size_t nq = size_t(s.B) * s.Tk * s.H * s.D, nk = size_t(s.B) * s.Tk * s.Hkv * s.D;
  std::mt19937 rng(static_cast<uint32_t>(s.Tk + s.D));
  std::normal_distribution<double> normal(0.0, 1.0);
  auto gen = [&](size_t n) {
    std::vector<double> v(n);
    for (auto& x : v) x = cpu::RoundTo(DType::kF16, cpu::RoundTo(DType::kBF16, normal(rng)));
    return v;
  };
  const auto q = gen(nq), k = gen(nk), v = gen(nk);
  cpu::NaiveAttentionOptions ref, naive;
  naive.emulate = dt;
  std::vector<double> o_ref(nq), l_ref(size_t(s.B) * s.H * s.Tk), o_naive(nq), l_naive(l_ref.size());
  cpu::NaiveAttentionFwd(as, ref, q.data(), k.data(), v.data(), o_ref.data(), l_ref.data());
  cpu::NaiveAttentionFwd(as, naive, q.data(), k.data(), v.data(), o_naive.data(), l_naive.data());

  auto to16 = [](double x) { return kBf16 ? DoubleToBf16Bits(x) : DoubleToHalfBits(x); };
  auto from16 = [](uint16_t h) { return kBf16 ? Bf16BitsToFloat(h) : HalfBitsToFloat(h); };
  // q and o: [B, 1, H, D]; caches: slices of [B, C, 2, Hkv, D] (NaN past row Tk).
  std::vector<uint16_t> qb(size_t(s.B) * s.H * s.D), ob(qb.size(), 0x7fc0),
      kv(2 * size_t(s.B) * C * s.Hkv * s.D, 0x7fc0);
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h)
      for (int d = 0; d < s.D; ++d)
        qb[(b * s.H + h) * s.D + d] = to16(q[((size_t(b) * s.Tk + s.Tk - 1) * s.H + h) * s.D + d]);
  for (int b = 0; b < s.B; ++b)
    for (int t = 0; t < s.Tk; ++t)
      for (int h = 0; h < s.Hkv; ++h)
        for (int d = 0; d < s.D; ++d) {
          const size_t src = ((size_t(b) * s.Tk + t) * s.Hkv + h) * s.D + d;
          const size_t dst = (((size_t(b) * C + t) * 2) * s.Hkv + h) * s.D + d;
          kv[dst] = to16(k[src]);
          kv[dst + size_t(s.Hkv) * s.D] = to16(v[src]);
        }
  cuda::flash::AttentionDecodeParams p;
  const int64_t kv_row = 2LL * s.Hkv * s.D;
  p.q = {qb.data(), int64_t{s.H} * s.D, int64_t{s.H} * s.D, s.D};
  p.o = {ob.data(), int64_t{s.H} * s.D, int64_t{s.H} * s.D, s.D};
  p.k = {kv.data(), kv_row * C, kv_row, s.D};
  p.v = {kv.data() + size_t(s.Hkv) * s.D, kv_row * C, kv_row, s.D};
  p.B = s.B, p.Tk = C, p.H = s.H, p.Hkv = s.Hkv, p.D = s.D, p.group = s.H / s.Hkv;
  p.n_chunks = (C + cuda::flash::kFlashDecodeChunk - 1) / cuda::flash::kFlashDecodeChunk;
  const std::vector<int32_t> kv_len(s.B, s.Tk);
  if (s.capacity > 0) p.kv_len = kv_len.data();
  p.scale_log2 = static_cast<float>(1.4426950408889634 / std::sqrt(double(s.D)));
  p.dtype = dt;
  const size_t parts = size_t(s.B) * s.H * p.n_chunks;
  std::vector<float> pm(parts, NAN), pl(parts, NAN), po(parts * s.D, NAN);
  p.part_m = pm.data(), p.part_l = pl.data(), p.part_o = po.data();
  constexpr int kThreads = cuda::flash::kDecodeWarps * 32;
  auto launch = [&](auto d_tag) {
    constexpr int kD = decltype(d_tag)::value;
    emu::Launch({static_cast<unsigned>(p.n_chunks), static_cast<unsigned>(s.H), static_cast<unsigned>(s.B)},
                kThreads, cuda::flash::DecodeSmemBytes<kD>(),
                [&] { cuda::flash::flash_decode_split_kernel<Elem, kD>(p); });
    emu::Launch({static_cast<unsigned>((s.B * s.H + cuda::flash::kDecodeWarps - 1) / cuda::flash::kDecodeWarps), 1, 1},
                kThreads, 0, [&] { cuda::flash::flash_decode_combine_kernel<Elem, kD>(p); });
  };
  switch (s.D) {
    case 16: launch(std::integral_constant<int, 16>{}); break;
    case 32: launch(std::integral_constant<int, 32>{}); break;
    case 64: launch(std::integral_constant<int, 64>{}); break;
    case 96: launch(std::integral_constant<int, 96>{}); break;
    case 128: launch(std::integral_constant<int, 128>{}); break;
    case 256: launch(std::integral_constant<int, 256>{}); break;
    default: FAIL() << "no decode kernel for D=" << s.D;
  }

  double err = 0, naive_err = 0, max_ref = 1;
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h)
      for (int d = 0; d < s.D; ++d) {
        const size_t last = ((size_t(b) * s.Tk + s.Tk - 1) * s.H + h) * s.D + d;
        const double got = from16(ob[(b * s.H + h) * s.D + d]);
        ASSERT_TRUE(std::isfinite(got));
        err = std::max(err, std::fabs(got - o_ref[last]));
        naive_err = std::max(naive_err, std::fabs(o_naive[last] - o_ref[last]));
        max_ref = std::max(max_ref, std::fabs(o_ref[last]));
      }
  EXPECT_LE(err, 2 * naive_err + 0x1p-18 * max_ref) << "err " << err << " naive " << naive_err;
}

TEST(FlashEmuDecodeTest, Bf16) {
  for (const DecodeShape s : {DecodeShape{1, 1, 2, 2, 64}, DecodeShape{2, 300, 4, 2, 64},
                              DecodeShape{1, 700, 2, 1, 128}})
    RunDecode<__nv_bfloat16>(s);
}

TEST(FlashEmuDecodeTest, Fp16) { RunDecode<__half>({1, 513, 2, 2, 128}); }

// D = 256: eight elements (four pairs) on each of the 32 lanes.
TEST(FlashEmuDecodeTest, HeadDim256) {
  RunDecode<__nv_bfloat16>({1, 300, 2, 1, 256});
  RunDecode<__half>({2, 1, 2, 2, 256});
}

// Head dims whose rows fill part of a warp (16: 8 lanes, 32: 16) or use pairs of
// pairs on 24 lanes (96): the idle lanes must add nothing to q·k or the output.
TEST(FlashEmuDecodeTest, SmallAndOddHeadDims) {
  for (const DecodeShape s : {DecodeShape{1, 1, 2, 2, 16}, DecodeShape{2, 300, 4, 2, 16},
                              DecodeShape{1, 513, 4, 1, 32}, DecodeShape{2, 260, 2, 2, 96}})
    RunDecode<__nv_bfloat16>(s);
  RunDecode<__half>({1, 300, 2, 1, 32});
  RunDecode<__half>({1, 257, 3, 3, 96});
}

// The cache at its capacity with kv_len keys: a length inside the first chunk (most
// chunks empty), one ending inside a later chunk, one on a chunk boundary, and the whole
// capacity; GQA and small heads.
TEST(FlashEmuDecodeTest, KvLengthWithinACapacity) {
  for (const DecodeShape s : {DecodeShape{1, 3, 2, 2, 64, 1024}, DecodeShape{2, 300, 4, 2, 64, 512},
                              DecodeShape{1, 256, 2, 1, 128, 1024}, DecodeShape{1, 512, 2, 2, 16, 512},
                              DecodeShape{2, 77, 4, 4, 32, 256}})
    RunDecode<__nv_bfloat16>(s);
  RunDecode<__half>({1, 600, 3, 3, 96, 1024});
}

}  // namespace
}  // namespace flashtick
