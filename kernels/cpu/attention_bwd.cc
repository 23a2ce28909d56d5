// Placeholder: AttentionBwd on the CPU has not landed yet (returns UnimplementedError).
#include "kernels/cpu/cpu_ops.h"

namespace flashtick::cpu {

absl::Status AttentionBwd(const OpDesc& desc, In, Out, CpuContext&) {
  return absl::UnimplementedError("cpu_reference: AttentionBwd not implemented yet");
}

}  // namespace flashtick::cpu
