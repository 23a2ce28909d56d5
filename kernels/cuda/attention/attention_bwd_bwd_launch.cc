// Placeholder: the CUDA AttentionBwdBwd has not landed yet (returns UnimplementedError).
#include "kernels/cuda/cuda_ops.h"

namespace flashtick::cuda {

absl::Status AttentionBwdBwd(const OpDesc& desc, In, Out, CudaContext&) {
  return absl::UnimplementedError("flash_cuda: AttentionBwdBwd not implemented yet");
}

}  // namespace flashtick::cuda
