// Exact properties of the flash_cuda ops that nmse parity (tests/parity) cannot show:
// - AdamW and Sophia-H are bitwise equal to the CPU fp32 reference (the contract fixes
//   the operation order; the kernels use non-contracting intrinsics), Sophia-H also
//   without a Hessian refresh (ĥ with no data);
// - Cast rounds exactly as the CPU (round to nearest even, once), specials included;
// - in-place use (Y = X, dX = dY, ...) gives the same bits as out-of-place;
// - BiasGrad and the LayerNorm backward column sums are deterministic run to run;
// - a label outside [0, K) gives a NaN row, ignored rows give zeros;
// - the CUDA-core fallback GEMM (used where cuBLASLt has no algorithm) matches the CPU,
//   with and without the fused bias;
// - the fused GELU (cuBLASLt's epilogue, or the row pass) against a float64 reference;
// - the fused bias (cuBLASLt's epilogue; in bf16 through a bf16 copy of the fp32 b; a b
//   only 4-byte aligned) and a matmul then AddBias both sit within their two roundings
//   of a float64 reference.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#ifdef FLASHTICK_WITH_CUDA
#include "kernels/cuda/cuda_kernels.h"
#endif
#include "absl/strings/str_cat.h"
#include "kernels/ops/gelu_bwd.h"
#include "tests/cuda_ops/gpu_test_util.h"

namespace flashtick::testing_gpu {
namespace {

using CudaOpsExactTest = GpuTest;

OpDesc Desc(Op op, DType dt) {
  OpDesc d;
  d.op = op;
  d.dtype = dt;
  return d;
}

OpDesc OptimizerDesc(Op op) {
  OpDesc d = Desc(op, DType::kF32);
  d.optimizer.lr = 0.05f;
  d.optimizer.beta1 = 0.9f;
  d.optimizer.beta2 = op == Op::kAdamW ? 0.95f : 0.99f;
  d.optimizer.eps = op == Op::kAdamW ? 1e-8f : 1e-6f;
  d.optimizer.weight_decay = 0.1f;
  d.optimizer.rho = 0.04f;
  d.optimizer.step = 7;
  d.optimizer.grad_scale = 0.7f;
  return d;
}

// Runs one optimizer step on `b`; returns param, m, v/h bytes.
std::vector<std::vector<uint8_t>> Step(Backend& b, const OpDesc& d, int64_t n, bool with_hhat) {
  Tensor grad = Place(b, DType::kF32, {n}, UniformRaw(n, 11, -2, 2));
  Tensor hhat = Place(b, DType::kF32, {n}, UniformRaw(n, 12, -0.2, 1.0));
  Tensor param = Place(b, DType::kF32, {n}, UniformRaw(n, 13));
  Tensor m = Place(b, DType::kF32, {n}, UniformRaw(n, 14, -0.1, 0.1));
  Tensor v = Place(b, DType::kF32, {n}, UniformRaw(n, d.op == Op::kAdamW ? 15 : 16,
                                                   d.op == Op::kAdamW ? 0.0 : -0.3, 0.5));
  std::vector<TensorView> in = {grad.view};
  if (d.op == Op::kSophiaH) {
    TensorView h = hhat.view;
    if (!with_hhat) h.data = nullptr;
    in.push_back(h);
  }
  const absl::Status s = b.Run(d, in, {param.view, m.view, v.view});
  EXPECT_TRUE(s.ok()) << s;
  return {FetchBytes(b, param), FetchBytes(b, m), FetchBytes(b, v)};
}

TEST_F(CudaOpsExactTest, OptimizersBitwiseEqualCpu) {
  const int64_t n = 100003;  // odd: the vector kernel's scalar tail runs
  struct Variant {
    Op op;
    bool hhat;
  };
  for (Variant var : {Variant{Op::kAdamW, false}, Variant{Op::kSophiaH, true},
                      Variant{Op::kSophiaH, false}}) {
    const OpDesc d = OptimizerDesc(var.op);
    const auto g = Step(gpu(), d, n, var.hhat);
    const auto c = Step(cpu(), d, n, var.hhat);
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(g[k].size(), c[k].size());
      int64_t diff = 0;
      for (size_t i = 0; i < g[k].size(); i += 4) diff += std::memcmp(&g[k][i], &c[k][i], 4) != 0;
      EXPECT_EQ(diff, 0) << OpName(var.op) << " hhat=" << var.hhat << " output " << k << ": "
                         << diff << " of " << n << " elements differ from the CPU";
    }
  }
}

// Hutchinson's ops (kernels/ops/hutchinson.h): the Philox probe is the CPU's bit for
// bit (a pure function of seed and index), and the probe product, rounded op by op,
// too; first sample (β = 0, A unread) and later ones (β = 1), in place on HV.
TEST_F(CudaOpsExactTest, HutchinsonOpsBitwiseEqualCpu) {
  const int64_t n = 100003;
  auto draw = [&](Backend& b, uint64_t seed) {
    Tensor u = Place(b, DType::kF32, {n}, std::vector<double>(n, 0.0));
    OpDesc d = Desc(Op::kRademacher, DType::kF32);
    d.probe.seed = seed;
    const absl::Status s = b.Run(d, {}, {u.view});
    EXPECT_TRUE(s.ok()) << s;
    return FetchBytes(b, u);
  };
  for (uint64_t seed : {uint64_t{0}, uint64_t{0x243f6a8885a308d3}}) {
    const auto g = draw(gpu(), seed), c = draw(cpu(), seed);
    EXPECT_EQ(g, c) << "rademacher seed " << seed;
  }
  for (double beta : {0.0, 1.0}) {
    auto product = [&](Backend& b) {
      Tensor u = Place(b, DType::kF32, {n}, UniformRaw(n, 31, -1, 1));
      Tensor hv = Place(b, DType::kF32, {n}, UniformRaw(n, 32, -3, 3));
      Tensor a = Place(b, DType::kF32, {n}, UniformRaw(n, 33, -2, 2));
      OpDesc d = Desc(Op::kProbeProduct, DType::kF32);
      d.probe.alpha = 0.37;
      d.probe.beta = beta;
      const absl::Status s = b.Run(d, {u.view, hv.view, a.view}, {hv.view});
      EXPECT_TRUE(s.ok()) << s;
      return FetchBytes(b, hv);
    };
    EXPECT_EQ(product(gpu()), product(cpu())) << "probe_product beta " << beta;
  }
}

TEST_F(CudaOpsExactTest, CastRoundsLikeTheCpu) {
  // Random values at many scales plus the hard cases: ties, fp16 overflow edges,
  // subnormals, signed zero, infinities, NaN.
  std::vector<double> v = UniformRaw(4093, 21, -4, 4);
  for (int e = -30; e <= 20; ++e) v.push_back(std::ldexp(1.0 + 1.0 / 512 + 1.0 / 4096, e));
  const double specials[] = {65504.0, 65519.99, 65520.0, 1e6, -1e6, std::ldexp(1.0, -24),
                             std::ldexp(1.0, -25), std::ldexp(3.0, -26), 1.0 + 1.0 / 256,
                             1.0 + 3.0 / 256, -0.0, std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(), 3.4e38, 1e-40};
  v.insert(v.end(), std::begin(specials), std::end(specials));
  const int64_t n = static_cast<int64_t>(v.size());
  for (DType from : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    for (DType to : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
      if (from == to) continue;
      std::vector<uint8_t> out[2];
      Backend* backends[2] = {&gpu(), &cpu()};
      for (int k = 0; k < 2; ++k) {
        Tensor x = Place(*backends[k], from, {n}, v);
        Tensor y = Empty(*backends[k], to, {n});
        const absl::Status s = backends[k]->Run(Desc(Op::kCast, from), {x.view}, {y.view});
        ASSERT_TRUE(s.ok()) << s;
        out[k] = FetchBytes(*backends[k], y);
      }
      const size_t es = DTypeSize(to);
      int64_t diff = 0;
      for (size_t i = 0; i < out[0].size(); i += es) {
        if (std::memcmp(&out[0][i], &out[1][i], es) == 0) continue;
        // Any NaN bit pattern is a NaN: compare as values there.
        double a, b;
        if (to == DType::kF32) {
          float fa, fb;
          std::memcpy(&fa, &out[0][i], 4);
          std::memcpy(&fb, &out[1][i], 4);
          a = fa, b = fb;
        } else if (to == DType::kF64) {
          std::memcpy(&a, &out[0][i], 8);
          std::memcpy(&b, &out[1][i], 8);
        } else {
          uint16_t ha, hb;
          std::memcpy(&ha, &out[0][i], 2);
          std::memcpy(&hb, &out[1][i], 2);
          const uint16_t exp_mask = to == DType::kBF16 ? 0x7f80 : 0x7c00;
          const uint16_t man_mask = to == DType::kBF16 ? 0x007f : 0x03ff;
          a = ((ha & exp_mask) == exp_mask && (ha & man_mask)) ? NAN : 0.0;
          b = ((hb & exp_mask) == exp_mask && (hb & man_mask)) ? NAN : 0.0;
        }
        if (std::isnan(a) && std::isnan(b)) continue;
        ++diff;
      }
      EXPECT_EQ(diff, 0) << DTypeName(from) << " -> " << DTypeName(to) << ": " << diff
                         << " of " << n << " values round differently from the CPU";
    }
  }
}

// Runs `d` twice on the GPU: out-of-place (fresh outputs) and with output `out_index`
// aliasing input `in_index`; the aliased result must equal the out-of-place one bitwise.
void ExpectInPlaceMatches(Backend& gpu, const OpDesc& d, std::vector<Tensor> ins,
                          std::vector<Tensor> outs, size_t in_index, size_t out_index) {
  std::vector<TensorView> iv, ov;
  for (auto& t : ins) iv.push_back(t.view);
  for (auto& t : outs) ov.push_back(t.view);
  ASSERT_TRUE(gpu.Run(d, iv, ov).ok());
  const auto expect = FetchBytes(gpu, outs[out_index]);
  ov[out_index] = iv[in_index];
  const absl::Status s = gpu.Run(d, iv, ov);
  ASSERT_TRUE(s.ok()) << OpName(d.op) << ": " << s;
  EXPECT_EQ(FetchBytes(gpu, ins[in_index]), expect) << OpName(d.op) << " in place differs";
}

TEST_F(CudaOpsExactTest, InPlaceEqualsOutOfPlace) {
  const int64_t M = 300, C = 96;
  const DType dt = DType::kBF16;
  auto x = [&](uint64_t seed) { return Place(gpu(), dt, {M, C}, Uniform(M * C, seed, -3, 3)); };
  auto empty = [&] { return Empty(gpu(), dt, {M, C}); };
  Tensor bias = Place(gpu(), DType::kF32, {C}, Uniform(C, 5));
  ExpectInPlaceMatches(gpu(), Desc(Op::kAddBias, dt), {x(1), bias}, {empty()}, 0, 0);
  ExpectInPlaceMatches(gpu(), Desc(Op::kAdd, dt), {x(2), x(3)}, {empty()}, 0, 0);
  ExpectInPlaceMatches(gpu(), Desc(Op::kAdd, dt), {x(2), x(3)}, {empty()}, 1, 0);
  ExpectInPlaceMatches(gpu(), Desc(Op::kGelu, dt), {x(4)}, {empty()}, 0, 0);
  ExpectInPlaceMatches(gpu(), Desc(Op::kSoftmax, dt), {x(6)}, {empty()}, 0, 0);
  ExpectInPlaceMatches(gpu(), Desc(Op::kGeluBwd, dt), {x(7), x(8)}, {empty()}, 1, 0);
  OpDesc ln = Desc(Op::kLayerNorm, dt);
  Tensor gamma = Place(gpu(), DType::kF32, {C}, Uniform(C, 9, 0.5, 1.5));
  ExpectInPlaceMatches(gpu(), ln, {x(10), gamma, bias},
                       {empty(), Empty(gpu(), DType::kF32, {M}), Empty(gpu(), DType::kF32, {M})},
                       0, 0);
  OpDesc rope = Desc(Op::kRope, dt);
  rope.rope.position_offset = 1234;
  auto r = [&](uint64_t seed) { return Place(gpu(), dt, {2, 50, 3, 64}, Uniform(19200, seed)); };
  ExpectInPlaceMatches(gpu(), rope, {r(11)}, {Empty(gpu(), dt, {2, 50, 3, 64})}, 0, 0);
}

TEST_F(CudaOpsExactTest, ColumnSumsAreDeterministic) {
  const int64_t M = 20000, C = 192;
  const DType dt = DType::kBF16;
  Tensor x = Place(gpu(), dt, {M, C}, Uniform(M * C, 31, -2, 2));
  Tensor dy = Place(gpu(), dt, {M, C}, Uniform(M * C, 32));
  Tensor gamma = Place(gpu(), DType::kF32, {C}, Uniform(C, 33, 0.5, 1.5));
  std::vector<uint8_t> first[3];
  for (int run = 0; run < 3; ++run) {
    Tensor db = Empty(gpu(), DType::kF32, {C});
    ASSERT_TRUE(gpu().Run(Desc(Op::kBiasGrad, dt), {dy.view}, {db.view}).ok());
    Tensor dx = Empty(gpu(), dt, {M, C});
    Tensor dg = Empty(gpu(), DType::kF32, {C}), dbeta = Empty(gpu(), DType::kF32, {C});
    ASSERT_TRUE(gpu().Run(Desc(Op::kLayerNormBwd, dt), {x.view, gamma.view, dy.view},
                          {dx.view, dg.view, dbeta.view})
                    .ok());
    const std::vector<uint8_t> now[3] = {FetchBytes(gpu(), db), FetchBytes(gpu(), dg),
                                         FetchBytes(gpu(), dbeta)};
    for (int k = 0; k < 3; ++k) {
      if (run == 0) first[k] = now[k];
      else EXPECT_EQ(now[k], first[k]) << "column sum " << k << " changed on run " << run;
    }
  }
  // dβ of LayerNormBwd and BiasGrad are the same sum over the same column plan, so
  // they agree to the bit.
  EXPECT_EQ(first[0], first[2]);
}

TEST_F(CudaOpsExactTest, CrossEntropyIgnoredRowsZeroBadLabelsNaN) {
  const int64_t M = 6, K = 3;
  const DType dt = DType::kF32;
  Tensor logits = Place(gpu(), dt, {M, K}, Uniform(M * K, 41, -3, 3));
  Tensor labels = Place(gpu(), DType::kI32, {M}, {0, -1, 2, 3, 1, -7});
  Tensor loss = Empty(gpu(), DType::kF32, {M});
  ASSERT_TRUE(gpu().Run(Desc(Op::kSoftmaxCrossEntropy, dt), {logits.view, labels.view},
                        {loss.view}).ok());
  const auto l = Fetch(gpu(), loss);
  EXPECT_GT(l[0], 0.0);
  EXPECT_EQ(l[1], 0.0);  // ignored (label −1)
  EXPECT_GT(l[2], 0.0);
  EXPECT_TRUE(std::isnan(l[3]));  // label 3 with K = 3
  EXPECT_GT(l[4], 0.0);
  EXPECT_TRUE(std::isnan(l[5]));  // negative, not the ignore label
}

// Matmul with attrs.bias, and the same matmul followed by AddBias, both on the GPU, each
// against a float64 sum over the operands as placed (already rounded to dt): the decode
// row (M = 1, odd N), odd shapes, a linear layer of the model's width, and beta = 1. b
// sits one element into its buffer (4-byte aligned: the heuristic is told the bias
// pointer's alignment). fp32 runs cuBLASLt's bias epilogue, bf16 its epilogue with b cast
// to bf16 first (kernels/cuda/matmul.cc); the pair rounds the GEMM and then the sum. In
// bf16 (unit roundoff u = 2^-8) each form rounds up to four values no larger than
// |exact| + |b|: split-K partial sums where cuBLASLt reduces them in the output type, the
// GEMM, b, and the sum. On an H100 the fused form missed a float64 reference by 0.72 ulp
// and the pair by 1.2 ulps, each more than two roundings allow. So both must sit within
// 4u·(|exact| + |b|) = 2^-6·(…); fp32 within 2^-20 plus its accumulation's error (the
// epilogue may change cuBLASLt's algorithm and summation order). With beta = 1 cuBLASLt
// also rounds a partial sum of the products to bf16 (H100, M = 64, N = 96, K = 128: both
// forms missed 4u·(|exact| + |b|) alike, by 2.1× and 1.97×, about one ulp of Σ|a·b|), so
// there the allowance adds u·Σ|a·b|. A bias left out would miss by |b|, ~0.5; a bias
// added twice, by as much.
TEST_F(CudaOpsExactTest, MatmulFusedBiasMatchesMatmulThenAddBias) {
  struct Shape {
    int64_t M, N, K;
    bool ta, tb;
    float beta;
  };
  const Shape shapes[] = {{1, 53, 256, false, true, 0},  {37, 53, 29, false, true, 0},
                          {37, 53, 29, true, false, 1},  {1024, 384, 256, false, true, 0},
                          {64, 96, 128, false, true, 1}, {4096, 64, 6, false, true, 0}};
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (const Shape& s : shapes) {
      const int64_t ar = s.ta ? s.K : s.M, ac = s.ta ? s.M : s.K;
      const int64_t br = s.tb ? s.N : s.K, bc = s.tb ? s.K : s.N;
      const auto cv = Uniform(s.M * s.N, 63), biasv = Uniform(s.N + 1, 64);
      Tensor a = Place(gpu(), dt, {ar, ac}, Uniform(ar * ac, 61));
      Tensor b = Place(gpu(), dt, {br, bc}, Uniform(br * bc, 62));
      Tensor bias_buf = Place(gpu(), DType::kF32, {s.N + 1}, biasv);
      TensorView bias = bias_buf.view;
      bias.data = static_cast<float*>(bias.data) + 1;
      bias.shape[0] = s.N;
      Tensor fused = Place(gpu(), dt, {s.M, s.N}, cv), pair = Place(gpu(), dt, {s.M, s.N}, cv);
      // The operands as the GPU holds them, before the matmuls overwrite C.
      const auto av = Fetch(gpu(), a), bv = Fetch(gpu(), b), c0 = Fetch(gpu(), fused);
      const auto bias_placed = Fetch(gpu(), bias_buf);
      OpDesc d = Desc(Op::kMatmul, dt);
      d.matmul = {s.ta, s.tb, 1.0f, s.beta, true};
      absl::Status st = gpu().Run(d, {a.view, b.view, bias}, {fused.view});
      ASSERT_TRUE(st.ok()) << st;
      d.matmul.bias = false;
      st = gpu().Run(d, {a.view, b.view}, {pair.view});
      ASSERT_TRUE(st.ok()) << st;
      st = gpu().Run(Desc(Op::kAddBias, dt), {pair.view, bias}, {pair.view});
      ASSERT_TRUE(st.ok()) << st;
      const auto got = Fetch(gpu(), fused), got_pair = Fetch(gpu(), pair);
      const double rel = dt == DType::kBF16 ? 0x1p-6 : 0x1p-20;
      // Each form's worst miss as a share of its allowance, over every element, printed
      // for every shape (the figures a tolerance change is judged by), then checked.
      double worst_fused = 0, worst_pair = 0;
      int64_t at_fused = 0, at_pair = 0;
      for (int64_t m = 0; m < s.M; ++m)
        for (int64_t n = 0; n < s.N; ++n) {
          double exact = s.beta * c0[m * s.N + n], abs_sum = 0;
          for (int64_t k = 0; k < s.K; ++k) {
            const double p =
                av[s.ta ? k * s.M + m : m * s.K + k] * bv[s.tb ? n * s.K + k : k * s.N + n];
            exact += p;
            abs_sum += std::fabs(p);
          }
          const double bn = bias_placed[n + 1];
          exact += bn;
          // The fp32 accumulation's own error is bounded by a few ulps of Σ|a·b|; with
          // beta ≠ 0 in bf16, one rounding of a partial sum too (above).
          const double partial = dt == DType::kBF16 && s.beta != 0 ? 0x1p-8 : 0x1p-22;
          const double tol = rel * (std::fabs(exact) + std::fabs(bn)) + partial * abs_sum + 1e-5;
          const int64_t i = m * s.N + n;
          const double f = std::fabs(got[i] - exact) / tol,
                       q = std::fabs(got_pair[i] - exact) / tol;
          if (!(f <= worst_fused)) worst_fused = f, at_fused = i;  // NaN is the worst
          if (!(q <= worst_pair)) worst_pair = q, at_pair = i;
        }
      const std::string where =
          absl::StrCat(DTypeName(dt), " M=", s.M, " N=", s.N, " K=", s.K, " beta=", s.beta);
      std::printf(
          "fused bias %s: worst miss %.3f of the allowance (fused, at %lld), %.3f "
          "(matmul then AddBias, at %lld)\n",
          where.c_str(), worst_fused, static_cast<long long>(at_fused), worst_pair,
          static_cast<long long>(at_pair));
      EXPECT_LE(worst_fused, 1.0) << "fused " << where << " at element " << at_fused;
      EXPECT_LE(worst_pair, 1.0) << "matmul then AddBias " << where << " at element " << at_pair;
    }
  }
}

// Matmul with attrs.gelu (cuBLASLt's GELU / GELU_BIAS epilogue, or the CUDA-core GEMM and
// the GELU row pass for the thin N = 3 layout), and the unfused matmul(+bias) then Gelu,
// each against GELU of a float64 sum over the operands as placed: the MLP's first layer
// at the model's width and for one row, odd shapes, N = 3, and no bias. A spread of ±2
// in A puts values on GELU's curved part and both tails. The pre-activation's allowance
// is the bias test's (4u·(|pre| + |b|) in bf16, above), carried through GELU's slope
// (|GELU'| ≤ 1.13), plus one rounding of the output (u·|GELU|); fp32 gets 2^-18 of each,
// room for cuBLASLt's own tanh. A GELU left out misses by up to |pre| on the negative
// side (GELU(−2) = −0.045), far outside.
TEST_F(CudaOpsExactTest, MatmulFusedGeluMatchesMatmulThenGelu) {
  struct Shape {
    int64_t M, N, K;
    bool bias;
  };
  const Shape shapes[] = {{1024, 1024, 256, true}, {1, 1024, 256, true}, {37, 53, 29, true},
                          {100, 3, 64, true},      {64, 96, 128, false}};
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (const Shape& s : shapes) {
      const auto biasv = Uniform(s.N, 74);
      Tensor a = Place(gpu(), dt, {s.M, s.K}, Uniform(s.M * s.K, 71, -2.0, 2.0));
      Tensor w = Place(gpu(), dt, {s.N, s.K}, Uniform(s.N * s.K, 72, -0.25, 0.25));
      Tensor bias = Place(gpu(), DType::kF32, {s.N}, biasv);
      Tensor fused = Place(gpu(), dt, {s.M, s.N}, Uniform(s.M * s.N, 73));
      Tensor pair = Place(gpu(), dt, {s.M, s.N}, Uniform(s.M * s.N, 73));
      const auto av = Fetch(gpu(), a), wv = Fetch(gpu(), w), bv = Fetch(gpu(), bias);
      OpDesc d = Desc(Op::kMatmul, dt);
      d.matmul = {false, true, 1.0f, 0.0f, s.bias, true};
      std::vector<TensorView> in = {a.view, w.view};
      if (s.bias) in.push_back(bias.view);
      std::vector<TensorView> out_fused = {fused.view}, out_pair = {pair.view};
      absl::Status st = gpu().Run(d, in, out_fused);
      ASSERT_TRUE(st.ok()) << st;
      d.matmul.gelu = false;
      st = gpu().Run(d, in, out_pair);
      ASSERT_TRUE(st.ok()) << st;
      st = gpu().Run(Desc(Op::kGelu, dt), {pair.view}, {pair.view});
      ASSERT_TRUE(st.ok()) << st;
      const auto got = Fetch(gpu(), fused), got_pair = Fetch(gpu(), pair);
      const double rel = dt == DType::kBF16 ? 0x1p-6 : 0x1p-18;
      const double out_rel = dt == DType::kBF16 ? 0x1p-8 : 0x1p-18;
      double worst_fused = 0, worst_pair = 0;
      int64_t at_fused = 0, at_pair = 0, negative = 0;
      for (int64_t m = 0; m < s.M; ++m)
        for (int64_t n = 0; n < s.N; ++n) {
          double pre = 0, abs_sum = 0;
          for (int64_t k = 0; k < s.K; ++k) {
            const double p = av[m * s.K + k] * wv[n * s.K + k];
            pre += p;
            abs_sum += std::fabs(p);
          }
          const double bn = s.bias ? bv[n] : 0.0;
          pre += bn;
          const double exact = GeluTanh(pre);
          negative += exact < 0;
          const double tol = 1.13 * (rel * (std::fabs(pre) + std::fabs(bn)) + 0x1p-22 * abs_sum) +
                             out_rel * std::fabs(exact) + 1e-5;
          const int64_t i = m * s.N + n;
          const double f = std::fabs(got[i] - exact) / tol,
                       q = std::fabs(got_pair[i] - exact) / tol;
          if (!(f <= worst_fused)) worst_fused = f, at_fused = i;  // NaN is the worst
          if (!(q <= worst_pair)) worst_pair = q, at_pair = i;
        }
      const std::string where =
          absl::StrCat(DTypeName(dt), " M=", s.M, " N=", s.N, " K=", s.K, " bias=", s.bias);
      std::printf(
          "fused gelu %s: worst miss %.3f of the allowance (fused, at %lld), %.3f "
          "(matmul then Gelu, at %lld)\n",
          where.c_str(), worst_fused, static_cast<long long>(at_fused), worst_pair,
          static_cast<long long>(at_pair));
      EXPECT_GT(negative, 0) << where << ": no value on GELU's negative side";
      EXPECT_LE(worst_fused, 1.0) << "fused " << where << " at element " << at_fused;
      EXPECT_LE(worst_pair, 1.0) << "matmul then Gelu " << where << " at element " << at_pair;
    }
  }
}

#ifdef FLASHTICK_WITH_CUDA
// The fallback runs only where cuBLASLt refuses a layout, so call it directly: every
// transpose combination, ragged tiles, strided operands, alpha/beta, the bias, against
// the CPU.
TEST_F(CudaOpsExactTest, SimtGemmMatchesCpu) {
  struct Shape {
    int64_t M, N, K;
    bool ta, tb;
    float alpha, beta;
    int64_t pad;
  };
  const Shape shapes[] = {{4096, 64, 6, false, true, 1, 0, 0},
                          {100, 3, 64, false, true, 1, 0, 0},
                          {65, 70, 33, true, false, 0.5f, 1, 3},
                          {17, 129, 5, true, true, 2, 0.5f, 1},
                          {1, 1, 1, false, false, 1, 0, 0}};
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (const Shape& s : shapes) {
      for (bool with_bias : {false, true}) {
        const int64_t ar = s.ta ? s.K : s.M, ac = s.ta ? s.M : s.K;
        const int64_t br = s.tb ? s.N : s.K, bc = s.tb ? s.K : s.N;
        const auto av = Uniform(ar * ac, 51), bv = Uniform(br * bc, 52),
                   cv = Uniform(s.M * s.N, 53);
        Tensor a = Place(gpu(), dt, {ar, ac}, av, s.pad), b = Place(gpu(), dt, {br, bc}, bv, s.pad);
        Tensor c = Place(gpu(), dt, {s.M, s.N}, cv, s.pad);
        const auto biasv = Uniform(s.N, 54);
        Tensor bias = Place(gpu(), DType::kF32, {s.N}, biasv);  // fp32 beside bf16 (ParamDType)
        ASSERT_TRUE(gpu().Synchronize().ok());
        cuda::SimtGemmParams p;
        p.M = s.M, p.N = s.N, p.K = s.K;
        p.lda = a.view.stride(0), p.ldb = b.view.stride(0), p.ldc = c.view.stride(0);
        p.trans_a = s.ta, p.trans_b = s.tb, p.alpha = s.alpha, p.beta = s.beta;
        p.a = a.view.data, p.b = b.view.data, p.c = c.view.data;
        if (with_bias) p.bias = static_cast<const float*>(bias.view.data);
        ASSERT_EQ(cuda::LaunchSimtGemm(dt, p, nullptr), cudaSuccess);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const auto got = Fetch(gpu(), c);

        Tensor ca = Place(cpu(), DType::kF64, {ar, ac}, av),
               cb = Place(cpu(), DType::kF64, {br, bc}, bv);
        Tensor cc = Place(cpu(), DType::kF64, {s.M, s.N}, cv);
        Tensor cbias = Place(cpu(), DType::kF64, {s.N}, biasv);
        OpDesc d = Desc(Op::kMatmul, DType::kF64);
        d.matmul = {s.ta, s.tb, s.alpha, s.beta, with_bias};
        const absl::Status cs = with_bias ? cpu().Run(d, {ca.view, cb.view, cbias.view}, {cc.view})
                                          : cpu().Run(d, {ca.view, cb.view}, {cc.view});
        ASSERT_TRUE(cs.ok()) << cs;
        const auto want = Fetch(cpu(), cc);
        double err2 = 0, ref2 = 0;
        for (size_t i = 0; i < want.size(); ++i) {
          err2 += (got[i] - want[i]) * (got[i] - want[i]);
          ref2 += want[i] * want[i];
        }
        EXPECT_LT(err2 / ref2, dt == DType::kF32 ? 1e-10 : 1e-4)
            << DTypeName(dt) << " M=" << s.M << " N=" << s.N << " K=" << s.K << " ta=" << s.ta
            << " tb=" << s.tb << " bias=" << with_bias;
      }
    }
  }
}
#endif

}  // namespace
}  // namespace flashtick::testing_gpu
