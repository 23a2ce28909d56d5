// BiasGrad on CUDA (kernels/ops/bias_grad.h): db[n] = Σ_m dY[m, n], fp32 accumulation,
// deterministic (column_reduce.cuh: fixed row splits added in order, no atomics).
// dY bf16/fp16/fp32 rows read as 16-byte vectors when aligned; db fp32.
#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace flashtick::cuda {
namespace {

template <typename T>
struct BiasGradTerm {
  const T* dy;
  int64_t stride;
  template <int kVec>
  __device__ __forceinline__ void Add(int64_t r, int64_t c0, float (&acc)[1][kVec]) const {
    float d[kVec];
    LoadVec<T, kVec>(dy + r * stride + c0, d);
#pragma unroll
    for (int v = 0; v < kVec; ++v) acc[0][v] += d[v];
  }
};

template <typename T>
ColumnPlan Plan(int64_t rows, int64_t cols, RowArg dy, int num_sms) {
  const int vec = RowsVectorizable(dy.p, dy.stride, cols, rows, sizeof(T), kVecOf<T>) ? kVecOf<T> : 1;
  return MakeColumnPlan(rows, cols, vec, num_sms);
}

ColumnPlan PlanFor(DType dtype, int64_t rows, int64_t cols, RowArg dy, int num_sms) {
  switch (dtype) {
    case DType::kBF16: return Plan<__nv_bfloat16>(rows, cols, dy, num_sms);
    case DType::kF16: return Plan<__half>(rows, cols, dy, num_sms);
    default: return Plan<float>(rows, cols, dy, num_sms);
  }
}

template <typename T>
cudaError_t LaunchTyped(const ColumnPlan& plan, RowArg dy, float* db, float* scratch, int num_sms,
                        cudaStream_t stream) {
  const BiasGradTerm<T> term{static_cast<const T*>(dy.p), dy.stride};
  ColumnOutputs outs;
  outs.out[0] = db;
  if (plan.vec == 1) return LaunchColumnSums<1, 1>(plan, term, scratch, outs, num_sms, stream);
  return LaunchColumnSums<1, kVecOf<T>>(plan, term, scratch, outs, num_sms, stream);
}

}  // namespace

int64_t BiasGradScratchFloats(DType dtype, int64_t rows, int64_t cols, RowArg dy, int num_sms) {
  return ColumnScratchFloats(PlanFor(dtype, rows, cols, dy, num_sms), 1);
}

cudaError_t LaunchBiasGrad(DType dtype, int64_t rows, int64_t cols, RowArg dy, float* db,
                           float* scratch, int num_sms, cudaStream_t stream) {
  const ColumnPlan plan = PlanFor(dtype, rows, cols, dy, num_sms);
  switch (dtype) {
    case DType::kF32: return LaunchTyped<float>(plan, dy, db, scratch, num_sms, stream);
    case DType::kBF16: return LaunchTyped<__nv_bfloat16>(plan, dy, db, scratch, num_sms, stream);
    case DType::kF16: return LaunchTyped<__half>(plan, dy, db, scratch, num_sms, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashtick::cuda
