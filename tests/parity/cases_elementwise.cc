// Parity cases for the elementwise and simple row ops: Add, AddBias, Cast
// (kernels/ops/elementwise.h), Gelu and its backward ops (gelu.h, gelu_bwd.h), Softmax
// (softmax.h) and BiasGrad (bias_grad.h). Shapes: contiguous rows whose width is a
// multiple of the 16-byte vector; odd widths and row-strided slices (NaN in the gaps)
// that force the scalar path; many rows, so BiasGrad splits its column sums; M = 0.
#include <memory>

#include "absl/strings/str_cat.h"
#include "tests/parity/ops_case.h"

namespace flashtick::parity {
namespace {

struct Rows {
  int64_t B, T, C;
  int64_t pad = 0;  // extra elements per row of the strided operands
  std::string Vars() const {
    return absl::StrCat("B=", B, ",T=", T, ",C=", C, pad ? absl::StrCat(",pad=", pad) : "");
  }
  // [B, T, C]; strided rows when pad > 0 and `strided`.
  TensorSpec Make(const char* name, bool strided, double lo = -1.0, double hi = 1.0) const {
    TensorSpec t = Spec(name, {B, T, C}, Role::kData, lo, hi);
    if (strided && pad > 0) t.strides = {T * (C + pad), C + pad, 1};
    return t;
  }
};

const Rows kRows[] = {{2, 37, 64}, {3, 11, 35}, {2, 33, 96, 8}, {1, 5, 7, 3}};
const Rows kManyRows[] = {{8, 1000, 64}, {3, 7, 35, 5}, {0, 4, 32}, {1, 4096, 3}};

// A case whose output dtype is fixed (Cast to fp16/bf16) or follows the run (fp32 Role).
class CastCase final : public OpCase {
 public:
  CastCase(std::string vars, std::vector<TensorSpec> in, std::vector<TensorSpec> out, DType to)
      : OpCase("cast", std::move(vars), DescOf(Op::kCast), std::move(in), std::move(out)), to_(to) {}
  DType TensorDType(const TensorSpec& spec, DType run) const override {
    if (spec.name != "Y") return TestCase::TensorDType(spec, run);
    if (to_ == DType::kF32) return run == DType::kF64 ? DType::kF64 : DType::kF32;
    return to_;
  }

 private:
  DType to_;
};

}  // namespace

FT_PARITY_CASES(elementwise) {
  CaseList v;
  auto add = [&](std::string name, Op op, std::string vars, std::vector<TensorSpec> in,
                 std::vector<TensorSpec> out) {
    v.push_back(std::make_unique<OpCase>(std::move(name), std::move(vars), DescOf(op),
                                         std::move(in), std::move(out)));
  };
  for (const Rows& r : kRows) {
    const TensorSpec bias = Spec("b", {r.C}, Role::kF32);
    add("add", Op::kAdd, r.Vars(), {r.Make("X", true), r.Make("Y", false)}, {r.Make("Z", true)});
    add("add_bias", Op::kAddBias, r.Vars(), {r.Make("X", false), bias}, {r.Make("Y", true)});
    // GELU over [-6, 6): both tails (tanh saturated) and the curved middle.
    add("gelu", Op::kGelu, r.Vars(), {r.Make("X", true, -6, 6)}, {r.Make("Y", false)});
    add("gelu_bwd", Op::kGeluBwd, r.Vars(), {r.Make("X", false, -6, 6), r.Make("dY", true)},
        {r.Make("dX", true)});
    add("gelu_bwd_bwd", Op::kGeluBwdBwd, r.Vars(),
        {r.Make("X", true, -6, 6), r.Make("dY", false), r.Make("gdX", true)},
        {r.Make("dX2", false), r.Make("ddY", true)});
    // Softmax over logits of scale ~8: far from uniform, no overflow.
    add("softmax", Op::kSoftmax, r.Vars(), {r.Make("X", true, -8, 8)}, {r.Make("Y", true)});
    // Cast: to fp32 (exact from every run dtype), and from off-grid values to bf16 and
    // fp16, so rounding is exercised (the reference rounds fp64 once).
    TensorSpec y32 = r.Make("Y", true);
    v.push_back(std::make_unique<CastCase>(r.Vars() + ",to=fp32",
                                           std::vector<TensorSpec>{r.Make("X", false, -3, 3)},
                                           std::vector<TensorSpec>{y32}, DType::kF32));
    for (DType to : {DType::kBF16, DType::kF16}) {
      auto c = std::make_unique<CastCase>(absl::StrCat(r.Vars(), ",to=", DTypeName(to)),
                                          std::vector<TensorSpec>{r.Make("X", true, -3, 3)},
                                          std::vector<TensorSpec>{r.Make("Y", false)}, to);
      c->OffGrid();
      v.push_back(std::move(c));
    }
  }
  // Softmax rows as wide as a vocabulary, and the 3-class head.
  add("softmax", Op::kSoftmax, "B=2,T=7,C=1000", {Spec("X", {2, 7, 1000}, Role::kData, -8, 8)},
      {Spec("Y", {2, 7, 1000})});
  add("softmax", Op::kSoftmax, "B=4,T=500,C=3", {Spec("X", {4, 500, 3}, Role::kData, -8, 8)},
      {Spec("Y", {4, 500, 3})});
  for (const Rows& r : kManyRows)
    add("bias_grad", Op::kBiasGrad, r.Vars(), {r.Make("dY", true)},
        {Spec("db", {r.C}, Role::kF32)});
  return v;
}

}  // namespace flashtick::parity
