// Ops whose CPU implementation has not landed yet: each returns UnimplementedError
// so callers and parity tests see a SKIP, never a silent pass. Remove an entry when
// its kernels/cpu/<op>.cc lands.
#include "kernels/cpu/cpu_ops.h"

namespace flashtick::cpu {

#define FT_PENDING(Name)                                                          \
  absl::Status Name(const OpDesc& desc, In, Out, CpuContext&) {                    \
    return absl::UnimplementedError(std::string("cpu_reference: ") + #Name +       \
                                    " not implemented yet");                      \
  }
FT_PENDING(Matmul)
FT_PENDING(AddBias)
FT_PENDING(BiasGrad)
FT_PENDING(Add)
FT_PENDING(Cast)
FT_PENDING(LayerNorm)
FT_PENDING(LayerNormBwd)
FT_PENDING(LayerNormBwdBwd)
FT_PENDING(Gelu)
FT_PENDING(GeluBwd)
FT_PENDING(GeluBwdBwd)
FT_PENDING(Softmax)
FT_PENDING(Rope)
FT_PENDING(SoftmaxCrossEntropy)
FT_PENDING(SoftmaxCrossEntropyBwd)
FT_PENDING(SoftmaxCrossEntropyBwdBwd)
FT_PENDING(AdamW)
FT_PENDING(SophiaH)
#undef FT_PENDING

}  // namespace flashtick::cpu
