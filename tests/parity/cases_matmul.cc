// Parity cases for Matmul (kernels/ops/matmul.h): every trans_a/trans_b combination;
// sizes that are not multiples of 8 (odd leading dims, which rule out 16-byte aligned
// cuBLASLt kernels for 16-bit types); operands as row-strided slices (NaN in the
// gaps); alpha ≠ 1 with beta = 1 accumulating into C; K = 0 (C = beta·C); M = 1 (the
// decode shape); and a linear layer of the model's size. The fused bias (attrs.bias,
// b fp32 beside bf16/fp16 C) on the linear layer's shapes: odd N, M = 1, beta = 1,
// strided C, K = 0, and the thin embedding (K = 6) and head (N = 3) layouts that run
// on the CUDA-core GEMM rather than cuBLASLt's epilogue. GELU (attrs.gelu) with and
// without the bias: the MLP's first layer at the model's width and for one row, odd
// shapes, strided C, K = 0 (C = GELU(b)), and the thin N = 3 layout (the CUDA-core GEMM,
// then the GELU row pass).
#include <memory>

#include "absl/strings/str_cat.h"
#include "tests/parity/ops_case.h"

namespace flashtick::parity {
namespace {

struct MatmulShape {
  int64_t M, N, K;
  bool ta, tb;
  float alpha = 1.0f, beta = 0.0f;
  int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // extra elements per row (strided views)
  bool bias = false;                        // + b [N] on every row (attrs.bias)
  bool gelu = false;                        // GELU of the result (attrs.gelu)
};

MatmulShape WithBias(MatmulShape s) {
  s.bias = true;
  return s;
}

MatmulShape WithGelu(MatmulShape s) {
  s.gelu = true;
  return s;
}

std::unique_ptr<TestCase> MakeCase(const MatmulShape& s) {
  OpDesc d = DescOf(Op::kMatmul);
  d.matmul.trans_a = s.ta;
  d.matmul.trans_b = s.tb;
  d.matmul.alpha = s.alpha;
  d.matmul.beta = s.beta;
  d.matmul.bias = s.bias;
  d.matmul.gelu = s.gelu;
  auto rows_of = [](int64_t r, int64_t c, int64_t pad, const char* name) {
    TensorSpec t = Spec(name, {r, c});
    if (pad > 0) t.strides = {c + pad, 1};
    return t;
  };
  TensorSpec a = rows_of(s.ta ? s.K : s.M, s.ta ? s.M : s.K, s.pad_a, "A");
  TensorSpec b = rows_of(s.tb ? s.N : s.K, s.tb ? s.K : s.N, s.pad_b, "B");
  TensorSpec c = rows_of(s.M, s.N, s.pad_c, "C");
  if (s.beta != 0.0f) c.accumulate = true;
  std::string vars = absl::StrCat("M=", s.M, ",N=", s.N, ",K=", s.K, ",ta=", s.ta, ",tb=", s.tb);
  if (s.alpha != 1.0f || s.beta != 0.0f) absl::StrAppend(&vars, ",alpha=", s.alpha, ",beta=", s.beta);
  if (s.pad_a || s.pad_b || s.pad_c)
    absl::StrAppend(&vars, ",pad=", s.pad_a, "/", s.pad_b, "/", s.pad_c);
  std::vector<TensorSpec> in = {a, b};
  if (s.bias) {
    in.push_back(Spec("b", {s.N}, Role::kF32));  // ParamDType: fp32 (fp64 in the reference)
    absl::StrAppend(&vars, ",bias=1");
  }
  if (s.gelu) absl::StrAppend(&vars, ",gelu=1");
  return std::make_unique<OpCase>("matmul", vars, d, std::move(in), std::vector<TensorSpec>{c});
}

const MatmulShape kShapes[] = {
    {64, 96, 128, false, false},
    {64, 96, 128, false, true},
    {64, 96, 128, true, false},
    {64, 96, 128, true, true},
    {37, 53, 29, false, true},  // odd everything
    {37, 53, 29, true, false},
    {33, 40, 48, false, true, 1.0f, 0.0f, 8, 8, 3},  // strided slices, odd ldc
    {64, 96, 128, false, true, 0.5f, 1.0f},          // C += 0.5·A·Bᵀ (gradient accumulation)
    {16, 24, 0, false, false, 1.0f, 0.5f},           // K = 0: C = 0.5·C
    {16, 24, 0, false, false, 1.0f, 0.0f},           // K = 0, beta = 0: C = 0
    {1, 768, 256, false, true},                      // one row (decode)
    {1024, 384, 256, false, true},                   // x·Wᵀ at the model's width
    {384, 256, 1024, true, false},                   // dW = dYᵀ·X
    WithBias({37, 53, 29, false, true}),             // y = x·Wᵀ + b, odd everything
    WithBias({37, 53, 29, true, false}),
    WithBias({64, 96, 128, false, false}),
    WithBias({1, 53, 256, false, true}),  // one row (decode), odd N
    WithBias({1, 768, 256, false, true}),
    WithBias({64, 96, 128, false, true, 0.5f, 1.0f}),          // x += ½·att·Wᵀ + b (residual)
    WithBias({33, 40, 48, false, true, 1.0f, 0.0f, 8, 8, 3}),  // strided, odd ldc
    WithBias({16, 24, 0, false, false, 1.0f, 0.5f}),           // K = 0: C = 0.5·C + b
    WithBias({4096, 64, 6, false, true}),                      // the embedding: K = 6 features
    WithBias({100, 3, 64, false, true}),                       // the head: N = 3 classes
    WithBias({1024, 384, 256, false, true}),  // the QKV projection at the model's width
    WithGelu(WithBias({1024, 1024, 256, false, true})),  // gelu(h·W1ᵀ + b1), the MLP's first layer
    WithGelu(WithBias({1, 1024, 256, false, true})),     // the same for one row (decode)
    WithGelu(WithBias({37, 53, 29, false, true})),       // odd everything
    WithGelu(WithBias({33, 40, 48, false, true, 1.0f, 0.0f, 8, 8, 3})),  // strided, odd ldc
    WithGelu(WithBias({16, 24, 0, false, false})),       // K = 0: C = GELU(b)
    WithGelu(WithBias({100, 3, 64, false, true})),       // N = 3: CUDA-core GEMM, then GELU
    WithGelu({64, 96, 128, false, true}),                // no bias
};

}  // namespace

FT_PARITY_CASES(matmul) {
  CaseList v;
  for (const auto& s : kShapes) v.push_back(MakeCase(s));
  return v;
}

}  // namespace flashtick::parity
