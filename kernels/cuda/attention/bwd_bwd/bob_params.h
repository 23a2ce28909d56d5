// Parameters and launch entry points of the CUDA attention backward-over-backward
// (FlashBoB, docs/derivations/attention_bwd_bwd.md). Host-visible: compiles without
// nvcc (cuda_runtime.h is a plain C++ header), so the launcher (attention_bwd_bwd_launch.cc)
// validates and fills BobParams with the ordinary C++ compiler. Strides are in elements; the head
// dim is contiguous. Layouts: Q, O, dO, gQ, ∂Q, ∂dO [B, T, H, D]; K, V, gK, gV, ∂K, ∂V [B, T, Hkv,
// D]; L (natural-log log-sum-exp), Dvec, c, e: fp32 [B, H, T] contiguous.
#pragma once

#include <cstdint>

#ifndef FLASHTICK_CUDA_EMULATION  // the CPU emulator (tests/cuda_emu) has no runtime API
#include <cuda_runtime.h>
#endif

#include "kernels/tensor.h"

namespace flashtick::cuda {

// A [B, T, heads, D] operand: element (b, t, h, d) is ptr[b·sb + t·st + h·sh + d].
struct BobOperand {
  void* ptr = nullptr;
  int64_t sb = 0, st = 0, sh = 0;
};

struct BobParams {
  // Inputs (read-only).
  BobOperand q, k, v, o, dout, gq, gk, gv;
  const float* lse = nullptr;   // L
  const float* dvec = nullptr;  // D_i = dO_i·O_i
  // Outputs.
  BobOperand ddq, ddk, ddv, dddo;
  // Row states written by pass 1 and read by pass 2 (eq. 3 and 8), [B, H, T] fp32.
  float* c = nullptr;
  float* e = nullptr;
  int B = 0, T = 0, H = 0, Hkv = 0;
  float scale = 0.0f;       // softmax scale s
  float scale_log2 = 0.0f;  // s·log2(e): P = exp2(QKᵀ·scale_log2 − L·log2(e))
  bool causal = true;
};

// Runs pass 1 then pass 2 on `stream` for dtype ∈ {kBF16, kF16} and kHeadDim ∈ {64, 128}
// (explicit instantiations in bob_inst_*.cu). Returns the launch error, if any.
#ifndef FLASHTICK_CUDA_EMULATION
template <DType kDType, int kHeadDim>
cudaError_t LaunchBobPasses(const BobParams& params, cudaStream_t stream);
#endif

}  // namespace flashtick::cuda
