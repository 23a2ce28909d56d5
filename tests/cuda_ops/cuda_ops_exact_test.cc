// Exact properties of the flash_cuda ops that nmse parity (tests/parity) cannot show:
// - AdamW and Sophia-H are bitwise equal to the CPU fp32 reference (the contract fixes
//   the operation order; the kernels use non-contracting intrinsics), Sophia-H also
//   without a Hessian refresh (ĥ with no data);
// - Cast rounds exactly as the CPU (round to nearest even, once), specials included;
// - in-place use (Y = X, dX = dY, ...) gives the same bits as out-of-place;
// - BiasGrad and the LayerNorm backward column sums are deterministic run to run;
// - a label outside [0, K) gives a NaN row, ignored rows give zeros.
#include <cmath>
#include <cstring>
#include <limits>

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

}  // namespace
}  // namespace flashtick::testing_gpu
