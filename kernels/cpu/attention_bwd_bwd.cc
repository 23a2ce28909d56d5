// Placeholder: AttentionBwdBwd on the CPU has not landed yet (returns UnimplementedError).
#include "kernels/cpu/cpu_ops.h"

namespace flashtick::cpu {

absl::Status AttentionBwdBwd(const OpDesc& desc, In, Out, CpuContext&) {
  return absl::UnimplementedError("cpu_reference: AttentionBwdBwd not implemented yet");
}

}  // namespace flashtick::cpu
