// Placeholder: the CUDA AttentionBwd has not landed yet (returns UnimplementedError).
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {

absl::Status AttentionBwd(const OpDesc& desc, In, Out, CudaContext&) {
  return absl::UnimplementedError("flash_cuda: AttentionBwd not implemented yet");
}

}  // namespace flashtick::cuda
