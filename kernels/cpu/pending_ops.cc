// Forward ops whose CPU implementation has not landed yet: each returns
// UnimplementedError so callers and parity tests see a SKIP, never a silent pass.
// Remove an entry when its kernels/cpu/<op>.cc lands.
#include "kernels/cpu/cpu_ops.h"

namespace flashtick::cpu {

#define FT_PENDING(Name)                                                          \
  absl::Status Name(const OpDesc& desc, In, Out, CpuContext&) {                    \
    return absl::UnimplementedError(std::string("cpu_reference: ") + #Name +       \
                                    " not implemented yet");                      \
  }
FT_PENDING(AddBias)
FT_PENDING(Add)
FT_PENDING(Cast)
FT_PENDING(LayerNorm)
FT_PENDING(Gelu)
FT_PENDING(Softmax)
FT_PENDING(Rope)
#undef FT_PENDING

}  // namespace flashtick::cpu
