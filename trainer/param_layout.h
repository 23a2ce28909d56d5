// ParamLayout: the trainable parameters of the tick transformer (the specs of
// model/params.h: names, shapes and order of model/transformer.h) packed into one flat
// buffer. Each tensor starts at a multiple of kParamAlign elements (aligned vector
// loads on the GPU); the gaps stay zero in every flat buffer (parameters, gradients,
// optimizer state, probe vectors), so a flat dot product is the sum over the
// parameters. decay: weight decay applies to matrices (rank 2) only, never to biases
// or LayerNorm γ/β (the GPT-2 / nanoGPT convention).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/config.h"
#include "model/params.h"

namespace flashtick {

struct FlatParam {
  ParamSpec spec;      // name, shape, initialisation (model/params.h)
  int64_t offset = 0;  // elements from the start of the flat buffer
  int64_t numel = 0;
  bool decay = false;
};

class ParamLayout {
 public:
  static constexpr int64_t kParamAlign = 16;

  static absl::StatusOr<ParamLayout> ForConfig(const ModelConfig& config);

  const std::vector<FlatParam>& params() const { return params_; }
  int64_t total() const { return total_; }  // flat elements, gaps included
  int64_t count() const { return count_; }  // Σ numel
  // Index of `name`, or −1.
  int Find(const std::string& name) const;

 private:
  std::vector<FlatParam> params_;
  int64_t total_ = 0, count_ = 0;
};

}  // namespace flashtick
