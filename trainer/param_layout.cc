// ParamLayout::ForConfig: offsets of the model's parameters in a flat buffer.
#include "trainer/param_layout.h"

#include "common/status_macros.h"

namespace flashtick {

absl::StatusOr<ParamLayout> ParamLayout::ForConfig(const ModelConfig& config) {
  RETURN_IF_ERROR(config.Validate());
  ParamLayout l;
  for (ParamSpec& s : TransformerParamSpecs(config)) {
    FlatParam p;
    p.numel = s.numel();
    p.offset = l.total_;
    p.decay = s.shape.size() >= 2;
    p.spec = std::move(s);
    l.total_ += (p.numel + kParamAlign - 1) / kParamAlign * kParamAlign;
    l.count_ += p.numel;
    l.params_.push_back(std::move(p));
  }
  return l;
}

int ParamLayout::Find(const std::string& name) const {
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].spec.name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace flashtick
