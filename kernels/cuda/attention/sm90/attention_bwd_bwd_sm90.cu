// The sm_90a backward-over-backward's launcher (flash_fwd_sm90.h): pass 1 then pass 2 of
// bob_sm90.cuh on one stream (stream order is all pass 2 needs to read pass 1's c and e).
// Built for sm_90a only (kernels/CMakeLists.txt, flashtick_sm90a); chosen by BobSm90Chosen
// (kernels/cuda/cuda_ops.h). By default pass 1 reads Q and dO, pass 2 K and V, as register
// operands (bob_sm90.cuh): 5-7 % faster than both from shared memory on an H200
// (docs/kernels/hopper.md). FLASHTICK_BOB_SM90_REGS picks another set (a comma list of
// qdo and kv; none for shared memory only), for measuring them against each other.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "kernels/cuda/attention/sm90/bob_sm90.cuh"
#include "kernels/cuda/attention/sm90/flash_fwd_sm90.h"

namespace flashtick::cuda::sm90 {
namespace {

template <typename Kernel>
cudaError_t LaunchPass(Kernel kernel, dim3 grid, int smem, const BobParams& p, cudaStream_t stream) {
  const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  kernel<<<grid, BobSm90Traits::kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <typename Elem>
cudaError_t LaunchPasses(const BobParams& p, cudaStream_t stream) {
  using Tr = BobSm90Traits;
  const BobSm90Operands regs = BobSm90RegisterOperands();
  const dim3 grid1((p.T + Tr::kP1Rows - 1) / Tr::kP1Rows, p.H, p.B);
  const cudaError_t err =
      regs.qdo ? LaunchPass(bob_pass1_sm90_kernel<Elem, true>, grid1, Tr::kP1SmemBytes, p, stream)
               : LaunchPass(bob_pass1_sm90_kernel<Elem, false>, grid1, Tr::kP1SmemBytes, p, stream);
  if (err != cudaSuccess) return err;
  const dim3 grid2((p.T + Tr::kP2Keys - 1) / Tr::kP2Keys, p.Hkv, p.B);
  if (regs.kv) return LaunchPass(bob_pass2_sm90_kernel<Elem, true>, grid2, Tr::kP2SmemBytes, p, stream);
  return LaunchPass(bob_pass2_sm90_kernel<Elem, false>, grid2, Tr::kP2SmemBytes, p, stream);
}

}  // namespace

BobSm90Operands BobSm90RegisterOperands() {
  static const BobSm90Operands regs = [] {
    const char* v = std::getenv("FLASHTICK_BOB_SM90_REGS");
    if (v == nullptr) return BobSm90Operands{};  // the default: both from registers
    BobSm90Operands r{false, false};
    const std::string list = v;
    for (size_t at = 0; at <= list.size();) {
      const size_t end = std::min(list.find(',', at), list.size());
      const std::string item = list.substr(at, end - at);
      r.qdo |= item == "qdo";
      r.kv |= item == "kv";
      at = end + 1;
    }
    return r;
  }();
  return regs;
}

bool BobSm90Runs(int head_dim, DType dtype, int sm) {
  return head_dim == BobSm90Traits::kHeadDim && sm == 90 && (dtype == DType::kBF16 || dtype == DType::kF16);
}

BobTiles BobSm90TileShape() {
  using Tr = BobSm90Traits;
  return BobTiles{Tr::kHeadDim, Tr::kP1Rows, Tr::kP1Keys, Tr::kThreads / 32, 2};
}

cudaError_t LaunchBobSm90(const BobParams& p, DType dtype, cudaStream_t stream) {
  if (dtype == DType::kBF16) return LaunchPasses<__nv_bfloat16>(p, stream);
  if (dtype == DType::kF16) return LaunchPasses<__half>(p, stream);
  return cudaErrorInvalidValue;
}

}  // namespace flashtick::cuda::sm90
