// Attention ops whose CPU implementation has not landed yet (see pending_ops.cc).
#include "kernels/cpu/cpu_ops.h"

namespace flashtick::cpu {

#define FT_PENDING(Name)                                                          \
  absl::Status Name(const OpDesc& desc, In, Out, CpuContext&) {                    \
    return absl::UnimplementedError(std::string("cpu_reference: ") + #Name +       \
                                    " not implemented yet");                      \
  }
FT_PENDING(AttentionFwd)
FT_PENDING(AttentionBwd)
FT_PENDING(AttentionBwdBwd)
FT_PENDING(AttentionDecode)
#undef FT_PENDING

}  // namespace flashtick::cpu
