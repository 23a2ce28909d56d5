// TrainOptimizer: per-tensor AdamW / Sophia-H ops over the flat parameter buffers.
#include "trainer/train_optimizer.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

const char* OptimizerKindName(OptimizerKind kind) {
  return kind == OptimizerKind::kAdamW ? "adamw" : "sophia_h";
}

absl::StatusOr<OptimizerKind> ParseOptimizerKind(const std::string& name) {
  if (name == "adamw") return OptimizerKind::kAdamW;
  if (name == "sophia_h") return OptimizerKind::kSophiaH;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer '", name, "': expected adamw or sophia_h"));
}

OptimizerHyper OptimizerHyper::Defaults(OptimizerKind kind) {
  OptimizerHyper h;
  if (kind == OptimizerKind::kSophiaH) {
    h.beta1 = 0.96;
    h.beta2 = 0.99;
    h.eps = 1e-12;
    h.weight_decay = 0.2;
    h.rho = 0.04;
  }
  return h;
}

absl::Status OptimizerHyper::Validate() const {
  auto bad = [](const char* what, double v) {
    return absl::InvalidArgumentError(absl::StrCat("optimizer: ", what, ", got ", v));
  };
  if (!(beta1 >= 0 && beta1 < 1)) return bad("beta1 must be in [0, 1)", beta1);
  if (!(beta2 >= 0 && beta2 < 1)) return bad("beta2 must be in [0, 1)", beta2);
  if (!(eps > 0) || !std::isfinite(eps)) return bad("eps must be finite and > 0", eps);
  if (!(weight_decay >= 0) || !std::isfinite(weight_decay))
    return bad("weight_decay must be finite and >= 0", weight_decay);
  if (!(rho > 0) || !std::isfinite(rho)) return bad("rho must be finite and > 0", rho);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TrainOptimizer>> TrainOptimizer::Create(OptimizerKind kind,
                                                                       const OptimizerHyper& hyper,
                                                                       ParamStore* store) {
  RETURN_IF_ERROR(hyper.Validate());
  std::unique_ptr<TrainOptimizer> o(new TrainOptimizer(kind, hyper, store));
  ASSIGN_OR_RETURN(o->m_, store->AllocateFlat());
  ASSIGN_OR_RETURN(o->second_, store->AllocateFlat());
  return o;
}

absl::Status TrainOptimizer::Step(int64_t step, double lr, double grad_scale,
                                  const TensorView* hhat) {
  OpDesc d;
  d.op = kind_ == OptimizerKind::kAdamW ? Op::kAdamW : Op::kSophiaH;
  d.dtype = store_->dtype();
  d.optimizer.lr = static_cast<float>(lr);
  d.optimizer.beta1 = static_cast<float>(hyper_.beta1);
  d.optimizer.beta2 = static_cast<float>(hyper_.beta2);
  d.optimizer.eps = static_cast<float>(hyper_.eps);
  d.optimizer.rho = static_cast<float>(hyper_.rho);
  d.optimizer.step = step;
  d.optimizer.grad_scale = static_cast<float>(grad_scale);
  Backend* be = store_->backend();
  const auto& params = store_->layout().params();
  for (int i = 0; i < static_cast<int>(params.size()); ++i) {
    d.optimizer.weight_decay = params[i].decay ? static_cast<float>(hyper_.weight_decay) : 0.0f;
    const TensorView grad = store_->Tensor(store_->grads(), i);
    std::vector<TensorView> in = {grad};
    if (d.op == Op::kSophiaH) {
      TensorView h = grad;
      h.data = hhat != nullptr ? store_->Tensor(*hhat, i).data : nullptr;
      in.push_back(h);
    }
    const std::vector<TensorView> out = {store_->Tensor(store_->values(), i), store_->Tensor(m_, i),
                                         store_->Tensor(second_, i)};
    absl::Status s = be->Run(d, in, out);
    if (!s.ok())
      return absl::Status(s.code(), absl::StrCat(OptimizerKindName(kind_), " step on ",
                                                 params[i].spec.name, ": ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace flashtick
