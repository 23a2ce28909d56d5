// The transformer forward (model/transformer_forward.cc) on flash_cuda against the same
// weights on the CPU in fp64: every op the model runs (Cast, Matmul with its fused bias
// incl. the K = 6 embedding and N = 3 head, LayerNorm, Rope on fused-QKV views, attention,
// Gelu, Softmax, residual Matmul with beta = 1) in bf16 and fp16, all steps and the
// last-step-only head (strided rows), and layers that exclude the step itself. Also: the
// kernel path names flash_cuda, and the backend's peak memory moves with the request.
// Skips with a message without a GPU.
#include <cmath>
#include <random>

#include "absl/strings/match.h"
#include "model/transformer.h"
#include "tests/cuda_ops/gpu_test_util.h"

namespace flashtick::testing_gpu {
namespace {

ModelConfig Config(int kv_heads) {
  ModelConfig c;
  c.features = 6;
  c.width = 256;
  c.layers = 2;
  c.heads = 4;  // D = 64: a head dim the Flash kernels instantiate
  c.kv_heads = kv_heads;
  c.mlp_ratio = 4;
  c.classes = 3;
  return c;
}

std::vector<float> Ticks(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = g(rng);
  return v;
}

using CudaModelTest = GpuTest;

TEST_F(CudaModelTest, ForwardMatchesCpuFp64) {
  struct Run {
    int kv_heads;
    int64_t B, T;
    bool last_only;
    int width = 256;  // 4 heads: D = 64; width 64 is flashtick_make_model's default, D = 16
    int exclude_self_layers = 0;  // the first k layers attend to earlier steps only
  };
  // The last two: attention that excludes the step itself (kernels/step_shift.h's Cast
  // and Zero on the GPU), in the first layer, and in both with the last block run as a
  // decode of the last step against the shifted keys (last_only).
  for (const Run& r : {Run{4, 2, 300, false}, Run{2, 1, 1000, true}, Run{4, 3, 1, false},
                       Run{4, 2, 300, false, 64}, Run{2, 1, 1000, true, 128},
                       Run{4, 2, 300, false, 256, 1}, Run{2, 1, 1000, true, 256, 2}}) {
    ModelConfig c = Config(r.kv_heads);
    c.width = r.width;
    c.exclude_self_layers = r.exclude_self_layers;
    const auto ticks = Ticks(r.B * r.T * c.features, 7 + r.T);
    ModelOptions ref_opt;
    ref_opt.compute_dtype = DType::kF64;
    auto ref = Transformer::InitRandom(c, 42, &cpu(), ref_opt);
    ASSERT_TRUE(ref.ok()) << ref.status();
    auto want = (*ref)->Predict(ticks, r.B, r.T, r.last_only);
    ASSERT_TRUE(want.ok()) << want.status();
    for (DType dt : {DType::kBF16, DType::kF16}) {
      ModelOptions opt;
      opt.compute_dtype = dt;
      auto m = Transformer::InitRandom(c, 42, &gpu(), opt);
      ASSERT_TRUE(m.ok()) << m.status();
      // The path names the Flash variant that runs (needs the desc's head_dim).
      // (Ours, cuDNN's, or auto before its first decision: docs/kernels/cudnn.md.)
      EXPECT_TRUE(absl::StartsWith((*m)->kernel_path(), "flash_cuda") ||
                  absl::StartsWith((*m)->kernel_path(), "cudnn_sdpa") ||
                  absl::StartsWith((*m)->kernel_path(), "attention_auto(flash_cuda"))
          << (*m)->kernel_path();
      EXPECT_FALSE(absl::StrContains((*m)->kernel_path(), "unsupported")) << (*m)->kernel_path();
      gpu().ResetPeakMemory();
      auto got = (*m)->Predict(ticks, r.B, r.T, r.last_only);
      ASSERT_TRUE(got.ok()) << DTypeName(dt) << ": " << got.status();
      ASSERT_EQ(got->size(), want->size());
      EXPECT_GT(gpu().Memory().peak_bytes, 0);
      // nmse of the probabilities' deviation from uniform (the signal; a random-init
      // model sits near 1/K, so plain nmse of p would hide real errors).
      const double uniform = 1.0 / c.classes;
      double max_err = 0.0, err2 = 0.0, ref2 = 0.0;
      for (size_t i = 0; i < want->size(); ++i) {
        const double e = static_cast<double>((*got)[i]) - (*want)[i];
        ASSERT_TRUE(std::isfinite((*got)[i])) << "probability " << i << " is not finite";
        max_err = std::max(max_err, std::fabs(e));
        err2 += e * e;
        ref2 += ((*want)[i] - uniform) * ((*want)[i] - uniform);
      }
      ASSERT_GT(ref2, 0.0);
      // bf16 keeps 8 significant bits, fp16 11: relative errors of ~1e-2 and ~1e-3 after
      // two blocks, squared.
      const double bound = dt == DType::kBF16 ? 1e-3 : 1e-4;
      EXPECT_LE(err2 / ref2, bound) << DTypeName(dt) << " Hkv=" << r.kv_heads << " T=" << r.T << " D=" << c.head_dim();
      EXPECT_LE(max_err, 0.05) << DTypeName(dt) << " Hkv=" << r.kv_heads << " T=" << r.T << " D=" << c.head_dim();
      std::printf("model forward %s B=%lld T=%lld Hkv=%d last_only=%d exclude_self=%d: "
                  "max|dp|=%.2e nmse(p-1/K)=%.2e\n",
                  DTypeName(dt), static_cast<long long>(r.B), static_cast<long long>(r.T),
                  r.kv_heads, r.last_only ? 1 : 0, r.exclude_self_layers, max_err, err2 / ref2);
    }
  }
}

}  // namespace
}  // namespace flashtick::testing_gpu
