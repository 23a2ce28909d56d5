// The production FlashBoB kernels (kernels/cuda/attention/bwd_bwd/, pass 1 and pass 2
// with their real traits) run on the CPU emulator of warp-level CUDA (tests/cuda_emu),
// so their index math (fragment layouts, swizzles, masks, causal tile ranges, GQA loop,
// strides, ragged tiles, end-of-row corrections) is checked on any machine. Same bound
// as the GPU test: error(kernel vs f64) ≤ 2 × error(plain reference with the same 16-bit
// roundings vs f64), per output. Not emulated: timing and cp.async races.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/common/half.h"
#include "kernels/cuda/attention/bwd_bwd/bob_launch_template.cuh"
#include "kernels/cuda/attention/sm90/bob_sm90.cuh"
#include "tests/bob/bob_problem.h"
#include "tests/cuda_emu/emu_intrinsics.h"

namespace flashtick::bob_test {
namespace {

using cuda::BobOperand;
using cuda::BobParams;

template <typename Elem>
constexpr DType kDType = std::is_same_v<Elem, __nv_bfloat16> ? DType::kBF16 : DType::kF16;

template <typename Elem>
double Round16(double x) {
  const float f = static_cast<float>(x);
  return kDType<Elem> == DType::kBF16 ? Bf16BitsToFloat(FloatToBf16Bits(f))
                                      : HalfBitsToFloat(FloatToHalfBits(f));
}

// A [B, T, heads, D] operand in 16-bit host storage; strided: stored [B, heads, T, D].
template <typename Elem>
struct Host16 {
  std::vector<uint16_t> bits;
  int64_t sb, st, sh;
  Host16(const BobCase& c, int64_t heads, bool strided, const std::vector<double>& x)
      : bits(c.B * c.T * heads * c.D, 0) {
    sb = heads * c.T * c.D;
    st = strided ? c.D : heads * c.D;
    sh = strided ? c.T * c.D : c.D;
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t t = 0; t < c.T; ++t)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t d = 0; d < c.D; ++d) {
            const float f =
                x.empty() ? 0.0f : static_cast<float>(x[((b * c.T + t) * heads + h) * c.D + d]);
            bits[b * sb + t * st + h * sh + d] =
                kDType<Elem> == DType::kBF16 ? FloatToBf16Bits(f) : FloatToHalfBits(f);
          }
  }
  BobOperand Arg() { return BobOperand{bits.data(), sb, st, sh}; }
  std::vector<double> Read(const BobCase& c, int64_t heads) const {
    std::vector<double> x(c.B * c.T * heads * c.D);
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t t = 0; t < c.T; ++t)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t d = 0; d < c.D; ++d) {
            const uint16_t v = bits[b * sb + t * st + h * sh + d];
            x[((b * c.T + t) * heads + h) * c.D + d] =
                kDType<Elem> == DType::kBF16 ? Bf16BitsToFloat(v) : HalfBitsToFloat(v);
          }
    return x;
  }
};

// kSm90: the wgmma passes of sm90/bob_sm90.cuh (D = 64) instead of the mma.sync ones;
// kRegisters: their variants with pass 1's Q, dO and pass 2's K, V as register operands.
template <typename Elem, int kHeadDim, bool kSm90, bool kRegisters = false>
BobOutputs RunEmulated(const BobProblem& p, bool strided) {
  const BobCase& c = p.c;
  Host16<Elem> q(c, c.H, strided, p.q), k(c, c.Hkv, strided, p.k), v(c, c.Hkv, strided, p.v),
      o(c, c.H, strided, p.o), dout(c, c.H, strided, p.dout), gq(c, c.H, strided, p.gq),
      gk(c, c.Hkv, strided, p.gk), gv(c, c.Hkv, strided, p.gv), ddq(c, c.H, strided, {}),
      ddk(c, c.Hkv, strided, {}), ddv(c, c.Hkv, strided, {}), dddo(c, c.H, strided, {});
  std::vector<float> lse(p.lse.begin(), p.lse.end()), dvec(p.dvec.begin(), p.dvec.end());
  std::vector<float> states(2 * c.StatSize(), NAN);  // pass 1 must write every c, e
  BobParams prm;
  prm.q = q.Arg(), prm.k = k.Arg(), prm.v = v.Arg(), prm.o = o.Arg(), prm.dout = dout.Arg();
  prm.gq = gq.Arg(), prm.gk = gk.Arg(), prm.gv = gv.Arg();
  prm.ddq = ddq.Arg(), prm.ddk = ddk.Arg(), prm.ddv = ddv.Arg(), prm.dddo = dddo.Arg();
  prm.lse = lse.data(), prm.dvec = dvec.data();
  prm.c = states.data(), prm.e = states.data() + c.StatSize();
  prm.B = static_cast<int>(c.B), prm.T = static_cast<int>(c.T);
  prm.H = static_cast<int>(c.H), prm.Hkv = static_cast<int>(c.Hkv);
  prm.scale = static_cast<float>(p.scale);
  prm.scale_log2 = static_cast<float>(p.scale * 1.4426950408889634);
  prm.causal = c.causal;
  if constexpr (kSm90) {
    using Tr = cuda::sm90::BobSm90Traits;
    emu::Launch({static_cast<unsigned>((c.T + Tr::kP1Rows - 1) / Tr::kP1Rows),
                 static_cast<unsigned>(c.H), static_cast<unsigned>(c.B)},
                Tr::kThreads, Tr::kP1SmemBytes, [&] { cuda::sm90::bob_pass1_sm90_kernel<Elem, kRegisters>(prm); });
    emu::Launch({static_cast<unsigned>((c.T + Tr::kP2Keys - 1) / Tr::kP2Keys),
                 static_cast<unsigned>(c.Hkv), static_cast<unsigned>(c.B)},
                Tr::kThreads, Tr::kP2SmemBytes, [&] { cuda::sm90::bob_pass2_sm90_kernel<Elem, kRegisters>(prm); });
    for (float s : states) EXPECT_TRUE(std::isfinite(s)) << "a row state c or e was not written";
    return BobOutputs{ddq.Read(c, c.H), ddk.Read(c, c.Hkv), ddv.Read(c, c.Hkv), dddo.Read(c, c.H)};
  }
  using T1 = cuda::bob::Pass1Traits<kHeadDim>;
  using T2 = cuda::bob::Pass2Traits<kHeadDim>;
  emu::Launch({static_cast<unsigned>((c.T + T1::kBlockM - 1) / T1::kBlockM),
               static_cast<unsigned>(c.H), static_cast<unsigned>(c.B)},
              T1::kThreads, cuda::bob::Pass1Smem<T1>::kBytes,
              [&] { cuda::bob::bob_pass1_kernel<Elem, T1>(prm); });
  emu::Launch({static_cast<unsigned>((c.T + T2::kBlockM - 1) / T2::kBlockM),
               static_cast<unsigned>(c.Hkv), static_cast<unsigned>(c.B)},
              T2::kThreads, cuda::bob::Pass2Smem<T2>::kBytes,
              [&] { cuda::bob::bob_pass2_kernel<Elem, T2>(prm); });
  for (float s : states) EXPECT_TRUE(std::isfinite(s)) << "a row state c or e was not written";
  return BobOutputs{ddq.Read(c, c.H), ddk.Read(c, c.Hkv), ddv.Read(c, c.Hkv), dddo.Read(c, c.H)};
}

template <typename Elem, int kHeadDim, bool kSm90 = false, bool kRegisters = false>
void CheckCase(BobCase c, bool strided, uint64_t seed) {
  c.D = kHeadDim;
  BobProblem p = BobProblem::Random(c, seed);
  for (auto* x : {&p.q, &p.k, &p.v, &p.dout, &p.gq, &p.gk, &p.gv})
    for (double& y : *x) y = Round16<Elem>(y);
  p.RecomputeStats();
  const BobOutputs ref = RunNaive(p);  // f64, from the rounded inputs
  BobOutputs naive{std::vector<double>(c.QSize()), std::vector<double>(c.KvSize()),
                   std::vector<double>(c.KvSize()), std::vector<double>(c.QSize())};
  cpu::BobNaiveBwdBwd(p.config(), p.q.data(), p.k.data(), p.v.data(), p.dout.data(), p.gq.data(),
                      p.gk.data(), p.gv.data(), naive.ddq.data(), naive.ddk.data(),
                      naive.ddv.data(), naive.dddo.data(), &Round16<Elem>);
  const BobOutputs got = RunEmulated<Elem, kHeadDim, kSm90, kRegisters>(p, strided);
  ASSERT_TRUE(AllFinite(got)) << c.Name();
  const char* names[] = {"dQ", "dK", "dV", "ddO"};
  const std::vector<double>* g[] = {&got.ddq, &got.ddk, &got.ddv, &got.dddo};
  const std::vector<double>* r[] = {&ref.ddq, &ref.ddk, &ref.ddv, &ref.dddo};
  const std::vector<double>* n[] = {&naive.ddq, &naive.ddk, &naive.ddv, &naive.dddo};
  std::string line = std::string(!kSm90 ? "attention_bwd_bwd_emu(" : kRegisters ? "attention_bwd_bwd_sm90a_qdoreg_kvreg_emu(" : "attention_bwd_bwd_sm90a_emu(") + c.Name() + "," + DTypeName(kDType<Elem>) +
                     (strided ? ",strided" : "") + "):";
  for (int i = 0; i < 4; ++i) {
    const double ek = RelL2(*g[i], *r[i]), en = RelL2(*n[i], *r[i]);
    EXPECT_LE(ek, 2.0 * en + kBoundFloor) << c.Name() << " " << names[i] << ": kernel " << ek
                                          << " vs same-precision reference " << en;
    line += std::string(" ") + names[i] + "=" + std::to_string(ek) + " (naive " +
            std::to_string(en) + ")";
  }
  std::cout << line << "\n";
}

TEST(BobEmu, Bf16D64) {
  CheckCase<__nv_bfloat16, 64>({1, 1, 2, 1, 64, true}, false, 1);
  CheckCase<__nv_bfloat16, 64>({1, 37, 4, 2, 64, true}, true, 2);
  CheckCase<__nv_bfloat16, 64>({1, 100, 4, 2, 64, false}, false, 3);
  CheckCase<__nv_bfloat16, 64>({2, 130, 2, 1, 64, true}, true, 4);
}

TEST(BobEmu, F16D64) { CheckCase<__half, 64>({1, 70, 2, 2, 64, true}, false, 5); }

TEST(BobEmu, Bf16D128) {
  CheckCase<__nv_bfloat16, 128>({1, 65, 4, 2, 128, true}, false, 6);
  CheckCase<__nv_bfloat16, 128>({1, 40, 2, 1, 128, false}, true, 7);
}

TEST(BobEmu, F16D128) { CheckCase<__half, 128>({1, 64, 2, 2, 128, true}, true, 8); }

// D = 256 on its 32 × 32 tiles with 2 × 4 warps (BobTileShape): T = 1; ragged last
// tiles (45 = 32 + 13, 70 = 2·32 + 6, 100 = 3·32 + 4) with causal tiles fully masked
// above the diagonal; GQA (pass 2 streams every query head of a K/V head); strided
// views; fp16.
TEST(BobEmu, Bf16D256) {
  CheckCase<__nv_bfloat16, 256>({1, 1, 2, 1, 256, true}, false, 9);
  CheckCase<__nv_bfloat16, 256>({1, 45, 4, 2, 256, true}, true, 10);
  CheckCase<__nv_bfloat16, 256>({1, 70, 2, 1, 256, false}, false, 11);
  CheckCase<__nv_bfloat16, 256>({1, 100, 4, 1, 256, true}, false, 13);  // 4 tiles, GQA 4/1
}

TEST(BobEmu, F16D256) { CheckCase<__half, 256>({2, 40, 2, 2, 256, true}, true, 12); }

// The wgmma passes (sm90/bob_sm90.cuh), D = 64, on the emulator's asynchronous wgmma:
// T = 1; ragged tiles (37, 100 = 64 + 36, 130 = 2·64 + 2) with causal blocks that one
// warpgroup sees whole and the other masked (pass 1's key halves, pass 2's 64-key
// warpgroups and their skipped query halves); GQA (pass 2's loop over a group's query
// heads); strided views; non-causal; fp16.
TEST(BobEmuSm90, Bf16D64) {
  CheckCase<__nv_bfloat16, 64, true>({1, 1, 2, 1, 64, true}, false, 21);
  CheckCase<__nv_bfloat16, 64, true>({1, 37, 4, 2, 64, true}, true, 22);
  CheckCase<__nv_bfloat16, 64, true>({1, 100, 2, 1, 64, false}, false, 23);
  CheckCase<__nv_bfloat16, 64, true>({2, 130, 2, 1, 64, true}, true, 24);
}

TEST(BobEmuSm90, F16D64) { CheckCase<__half, 64, true>({1, 70, 2, 2, 64, true}, false, 25); }

// Pass 1 with Q and dO, pass 2 with K and V, as register operands: the same cases' shapes
// (T = 1, ragged, causal halves skipped by one warpgroup, GQA, strided, non-causal, fp16).
TEST(BobEmuSm90, OperandsInRegisters) {
  CheckCase<__nv_bfloat16, 64, true, true>({1, 1, 2, 1, 64, true}, false, 31);
  CheckCase<__nv_bfloat16, 64, true, true>({2, 130, 4, 2, 64, true}, true, 32);
  CheckCase<__nv_bfloat16, 64, true, true>({1, 100, 2, 1, 64, false}, false, 33);
  CheckCase<__half, 64, true, true>({1, 70, 2, 2, 64, true}, true, 34);
}

}  // namespace
}  // namespace flashtick::bob_test
