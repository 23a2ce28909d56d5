// Training ops (backward, double-backward, loss, optimizers) whose CPU
// implementation has not landed yet; same rule as pending_ops.cc.
#include "kernels/cpu/cpu_ops.h"

namespace flashtick::cpu {

#define FT_PENDING(Name)                                                          \
  absl::Status Name(const OpDesc& desc, In, Out, CpuContext&) {                    \
    return absl::UnimplementedError(std::string("cpu_reference: ") + #Name +       \
                                    " not implemented yet");                      \
  }
FT_PENDING(BiasGrad)
FT_PENDING(LayerNormBwd)
FT_PENDING(LayerNormBwdBwd)
FT_PENDING(GeluBwd)
FT_PENDING(GeluBwdBwd)
FT_PENDING(SoftmaxCrossEntropy)
FT_PENDING(SoftmaxCrossEntropyBwd)
FT_PENDING(SoftmaxCrossEntropyBwdBwd)
FT_PENDING(AdamW)
FT_PENDING(SophiaH)
#undef FT_PENDING

}  // namespace flashtick::cpu
