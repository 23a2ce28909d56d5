// Deterministic column sums over rows for the CPU training ops (BiasGrad, dγ, dβ).
// Rows are cut into fixed blocks of `block` rows; each block writes its own f64
// partial [C], and the partials are added in block order. The result depends only on
// the data and the block size, never on the thread count or scheduling, which is what
// bit-exact resume of training on the CPU needs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/thread_pool.h"

namespace flashtick::cpu {

class BlockSums {
 public:
  // `sums` column sums of width C each (e.g. dγ and dβ: sums = 2).
  BlockSums(int64_t rows, int64_t block, int64_t cols, int sums)
      : rows_(rows),
        block_(block),
        cols_(cols),
        sums_(sums),
        blocks_((rows + block - 1) / block),
        partial_(static_cast<size_t>(blocks_ * cols * sums), 0.0) {}

  // Runs fn(row_begin, row_end, partial) for every block on the pool; partial points at
  // the block's zeroed f64 [sums, C] accumulator.
  template <typename Fn>
  void ForEachBlock(ThreadPool* pool, Fn&& fn) {
    pool->ParallelFor(blocks_, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        fn(b * block_, std::min(rows_, (b + 1) * block_), &partial_[b * cols_ * sums_]);
    });
  }

  // out[c] = Σ_blocks partial[block][sum][c], added in block order; T is the output dtype.
  template <typename T>
  void Reduce(int sum, T* out) const {
    for (int64_t c = 0; c < cols_; ++c) {
      double acc = 0.0;
      for (int64_t b = 0; b < blocks_; ++b) acc += partial_[(b * sums_ + sum) * cols_ + c];
      out[c] = static_cast<T>(acc);
    }
  }

 private:
  int64_t rows_, block_, cols_;
  int sums_;
  int64_t blocks_;
  std::vector<double> partial_;
};

}  // namespace flashtick::cpu
