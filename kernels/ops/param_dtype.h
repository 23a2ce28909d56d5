// The dtype of parameter-shaped tensors in the training ops. Mixed precision on the
// GPU keeps activations in bf16/f16 and everything parameter-shaped in fp32: LayerNorm
// γ and β, biases, their gradients, the per-row losses and loss cotangents, and the
// optimizer state (fp32 master weights, moments, Hessian EMA). On the CPU every
// tensor is fp32 or fp64 and parameters share the activations' dtype.
//   ParamDType(bf16) = ParamDType(f16) = fp32;  ParamDType(f32) = f32;  ParamDType(f64) = f64
#pragma once

#include "kernels/tensor.h"

namespace flashtick {

inline DType ParamDType(DType activations) {
  return (activations == DType::kBF16 || activations == DType::kF16) ? DType::kF32 : activations;
}

}  // namespace flashtick
