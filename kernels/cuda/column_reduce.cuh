// Deterministic column sums over rows, for BiasGrad and the LayerNorm backward's dγ,
// dβ, ∂γ (include from .cu only):
//   out_s[c] = Σ_r term_s(r, c),  s < kSums,  fp32
// Pass 1 (column_partials_kernel): block (bx, by) threads, grid (column tiles, splits);
// thread (tx, ty) owns kVec adjacent columns and walks rows ty, ty + by, ... of its
// split, then the block adds its by partial rows in ty order into partial[split][s][c].
// Pass 2 (column_finish_kernel): out_s[c] = Σ_split partial[split][s][c] in split order.
// No atomics, so the result depends only on the data and the plan (rows, cols, SM
// count), never on scheduling: two runs on one GPU are bitwise equal.
// Term: a functor with template <int kVec> void Add(int64_t r, int64_t c0,
// float (&acc)[kSums][kVec]) const that adds row r's terms for columns c0..c0+kVec-1.
#pragma once

#include <cstdint>

#include "kernels/cuda/cuda_common.cuh"

namespace flashtick::cuda {

inline constexpr int kColumnThreads = 256;
inline constexpr int64_t kColumnMinRowsPerSplit = 64;  // below this a split is mostly overhead
inline constexpr int kColumnBlocksPerSm = 4;            // pass-1 blocks per SM to aim for

struct ColumnPlan {
  int64_t rows = 0, cols = 0, rows_per_split = 1;
  int vec = 1, bx = 1, by = 1, splits = 1, col_blocks = 1;
};

// The plan for vectors of `vec` columns (vec = 1 when the rows are not vector-aligned).
inline ColumnPlan MakeColumnPlan(int64_t rows, int64_t cols, int vec, int num_sms) {
  ColumnPlan p;
  p.rows = rows;
  p.cols = cols;
  p.vec = vec;
  const int64_t vcols = CeilDiv(cols, vec);
  p.bx = 1;
  while (p.bx < kWarp && p.bx < vcols) p.bx *= 2;  // a power of two ≤ 32: whole warps per row group
  p.by = kColumnThreads / p.bx;
  p.col_blocks = static_cast<int>(CeilDiv(vcols, p.bx));
  const int64_t target = CeilDiv(int64_t{kColumnBlocksPerSm} * (num_sms > 0 ? num_sms : 1),
                                 p.col_blocks);
  const int64_t max_splits = CeilDiv(rows, kColumnMinRowsPerSplit);
  int64_t splits = target < max_splits ? target : max_splits;
  if (splits < 1) splits = 1;
  p.rows_per_split = rows > 0 ? CeilDiv(rows, splits) : 1;
  p.splits = rows > 0 ? static_cast<int>(CeilDiv(rows, p.rows_per_split)) : 1;
  return p;
}

// Scratch floats pass 1 writes.
inline int64_t ColumnScratchFloats(const ColumnPlan& p, int sums) {
  return int64_t{p.splits} * sums * p.cols;
}

template <int kSums, int kVec, typename Term>
__global__ void __launch_bounds__(kColumnThreads)
    column_partials_kernel(ColumnPlan plan, float* partial, Term term) {
  __shared__ float smem[kColumnThreads * kSums * kVec];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t c0 = (int64_t{blockIdx.x} * blockDim.x + tx) * kVec;
  const bool active = c0 < plan.cols;
  float acc[kSums][kVec];
#pragma unroll
  for (int s = 0; s < kSums; ++s)
#pragma unroll
    for (int v = 0; v < kVec; ++v) acc[s][v] = 0.0f;
  const int64_t r0 = int64_t{blockIdx.y} * plan.rows_per_split;
  const int64_t r1 = r0 + plan.rows_per_split < plan.rows ? r0 + plan.rows_per_split : plan.rows;
  if (active)
    for (int64_t r = r0 + ty; r < r1; r += blockDim.y) term.template Add<kVec>(r, c0, acc);
  float* mine = smem + (ty * blockDim.x + tx) * kSums * kVec;
#pragma unroll
  for (int s = 0; s < kSums; ++s)
#pragma unroll
    for (int v = 0; v < kVec; ++v) mine[s * kVec + v] = acc[s][v];
  __syncthreads();
  if (ty != 0 || !active) return;
  // Fixed order over ty: deterministic.
  for (int y = 1; y < static_cast<int>(blockDim.y); ++y) {
    const float* other = smem + (y * blockDim.x + tx) * kSums * kVec;
#pragma unroll
    for (int s = 0; s < kSums; ++s)
#pragma unroll
      for (int v = 0; v < kVec; ++v) acc[s][v] += other[s * kVec + v];
  }
#pragma unroll
  for (int s = 0; s < kSums; ++s) {
    float* dst = partial + (int64_t{blockIdx.y} * kSums + s) * plan.cols + c0;
#pragma unroll
    for (int v = 0; v < kVec; ++v) dst[v] = acc[s][v];
  }
}

struct ColumnOutputs {
  float* out[2] = {nullptr, nullptr};
};

// A template (not a plain kernel) so every .cu including this header may instantiate it.
template <int kSums>
__global__ void __launch_bounds__(kColumnThreads)
    column_finish_kernel(ColumnPlan plan, const float* partial, ColumnOutputs outs) {
  const int64_t n = int64_t{kSums} * plan.cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t s = i / plan.cols, c = i - s * plan.cols;
    float acc = 0.0f;
    for (int k = 0; k < plan.splits; ++k) acc += partial[(int64_t{k} * kSums + s) * plan.cols + c];
    outs.out[s][c] = acc;
  }
}

// Runs both passes. `partial` holds ColumnScratchFloats(plan, kSums) floats.
template <int kSums, int kVec, typename Term>
cudaError_t LaunchColumnSums(const ColumnPlan& plan, Term term, float* partial, ColumnOutputs outs,
                             int num_sms, cudaStream_t stream) {
  static_assert(kSums >= 1 && kSums <= 2, "ColumnOutputs holds two outputs");
  if (plan.cols == 0) return cudaSuccess;
  const dim3 block(plan.bx, plan.by);
  const dim3 grid(plan.col_blocks, plan.splits);
  column_partials_kernel<kSums, kVec, Term><<<grid, block, 0, stream>>>(plan, partial, term);
  const int64_t n = int64_t{kSums} * plan.cols;
  column_finish_kernel<kSums><<<GridFor(n, kColumnThreads, num_sms), kColumnThreads, 0, stream>>>(
      plan, partial, outs);
  return cudaGetLastError();
}

}  // namespace flashtick::cuda
