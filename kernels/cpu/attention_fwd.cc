// Placeholder: AttentionFwd on the CPU has not landed yet (returns UnimplementedError).
#include "kernels/cpu/cpu_ops.h"

namespace flashtick::cpu {

absl::Status AttentionFwd(const OpDesc& desc, In, Out, CpuContext&) {
  return absl::UnimplementedError("cpu_reference: AttentionFwd not implemented yet");
}

}  // namespace flashtick::cpu
