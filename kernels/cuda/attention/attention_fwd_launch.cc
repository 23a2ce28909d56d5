// Placeholder: the CUDA AttentionFwd has not landed yet (returns UnimplementedError).
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {

absl::Status AttentionFwd(const OpDesc& desc, In, Out, CudaContext&) {
  return absl::UnimplementedError("flash_cuda: AttentionFwd not implemented yet");
}

}  // namespace flashtick::cuda
