// Parity cases for softmax cross-entropy forward, backward and backward-over-backward
// (kernels/ops/cross_entropy.h): the 3-class tick head with ignored rows (labels drawn
// from {−1, 0, 1, 2}, ignore_label = −1), 10 classes with row-strided logits (NaN in
// the gaps), and 1,000 classes (a row spans many lanes of the warp).
#include <memory>

#include "absl/strings/str_cat.h"
#include "tests/parity/ops_case.h"

namespace flashtick::parity {
namespace {

struct CeShape {
  int64_t B, T, K;
  int64_t pad = 0;
};

const CeShape kShapes[] = {{4, 500, 3}, {2, 37, 10, 6}, {2, 9, 1000}};

}  // namespace

FT_PARITY_CASES(cross_entropy) {
  CaseList v;
  for (const CeShape& s : kShapes) {
    const std::string vars =
        absl::StrCat("B=", s.B, ",T=", s.T, ",K=", s.K, s.pad ? absl::StrCat(",pad=", s.pad) : "");
    auto logits_like = [&](const char* name, bool strided) {
      TensorSpec t = Spec(name, {s.B, s.T, s.K}, Role::kData, -4, 4);
      if (strided && s.pad) t.strides = {s.T * (s.K + s.pad), s.K + s.pad, 1};
      return t;
    };
    const TensorSpec labels = Spec("labels", {s.B, s.T}, Role::kI32, -1, static_cast<double>(s.K));
    const TensorSpec per_row = Spec("dloss", {s.B, s.T}, Role::kF32, 0.0, 1.0);
    auto named = [](TensorSpec t, const char* n) { t.name = n; return t; };
    auto desc = [](Op op) {
      OpDesc d = DescOf(op);
      d.cross_entropy.ignore_label = -1;
      return d;
    };
    v.push_back(std::make_unique<OpCase>(
        "softmax_cross_entropy", vars, desc(Op::kSoftmaxCrossEntropy),
        std::vector<TensorSpec>{logits_like("logits", true), labels},
        std::vector<TensorSpec>{named(per_row, "loss")}));
    v.push_back(std::make_unique<OpCase>(
        "softmax_cross_entropy_bwd", vars, desc(Op::kSoftmaxCrossEntropyBwd),
        std::vector<TensorSpec>{logits_like("logits", true), labels, per_row},
        std::vector<TensorSpec>{logits_like("dlogits", false)}));
    v.push_back(std::make_unique<OpCase>(
        "softmax_cross_entropy_bwd_bwd", vars, desc(Op::kSoftmaxCrossEntropyBwdBwd),
        std::vector<TensorSpec>{logits_like("logits", false), labels, per_row,
                                logits_like("g", true)},
        std::vector<TensorSpec>{logits_like("dlogits2", true), named(per_row, "ddloss")}));
  }
  return v;
}

}  // namespace flashtick::parity
