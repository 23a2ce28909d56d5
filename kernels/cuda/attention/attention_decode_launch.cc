// Placeholder: the CUDA AttentionDecode has not landed yet (returns UnimplementedError).
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {

absl::Status AttentionDecode(const OpDesc& desc, In, Out, CudaContext&) {
  return absl::UnimplementedError("flash_cuda: AttentionDecode not implemented yet");
}

}  // namespace flashtick::cuda
