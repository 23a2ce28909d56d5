// Helpers for the flash_cuda backend tests: a fixture that creates the CUDA and CPU
// backends (skipping with a clear message where no GPU is visible, so the tests still
// build and pass vacuously-but-visibly in CPU-only CI), and tensors placed on either
// backend from fp64 values (encoded to the tensor's dtype on the host) and read back.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/tensor.h"

namespace flashtick::testing_gpu {

// A tensor owned by a backend: contiguous unless strides are given.
struct Tensor {
  std::shared_ptr<void> mem;
  TensorView view;
  size_t bytes = 0;  // of the whole buffer
};

// Encodes `values` (row-major logical order) into `dtype` and copies them to `b`.
// With row_pad > 0 the last dim is padded (row stride = last + row_pad; gaps NaN).
Tensor Place(Backend& b, DType dtype, const std::vector<int64_t>& shape,
             const std::vector<double>& values, int64_t row_pad = 0);
// An uninitialised (NaN-filled) tensor.
Tensor Empty(Backend& b, DType dtype, const std::vector<int64_t>& shape, int64_t row_pad = 0);
// Logical values back in fp64.
std::vector<double> Fetch(Backend& b, const Tensor& t);
// The raw bytes of the whole buffer (for bitwise comparisons).
std::vector<uint8_t> FetchBytes(Backend& b, const Tensor& t);

// n uniform values in [lo, hi) rounded to the bf16 grid (exact in every float dtype).
std::vector<double> Uniform(size_t n, uint64_t seed, double lo = -1.0, double hi = 1.0);
// Same, without rounding (for tests of rounding itself).
std::vector<double> UniformRaw(size_t n, uint64_t seed, double lo = -1.0, double hi = 1.0);

int64_t Numel(const std::vector<int64_t>& shape);

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  Backend& gpu() { return *gpu_; }
  Backend& cpu() { return *cpu_; }
  std::unique_ptr<Backend> gpu_, cpu_;
};

}  // namespace flashtick::testing_gpu
