// Tensor placement and read-back for the flash_cuda backend tests (gpu_test_util.h).
#include "tests/cuda_ops/gpu_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/common/half.h"

namespace flashtick::testing_gpu {
namespace {

void Encode(DType dt, double x, uint8_t* p) {
  switch (dt) {
    case DType::kF32: { const float f = static_cast<float>(x); std::memcpy(p, &f, 4); break; }
    case DType::kF64: std::memcpy(p, &x, 8); break;
    case DType::kBF16: { const uint16_t h = DoubleToBf16Bits(x); std::memcpy(p, &h, 2); break; }
    case DType::kF16: { const uint16_t h = DoubleToHalfBits(x); std::memcpy(p, &h, 2); break; }
    case DType::kI32: { const int32_t i = static_cast<int32_t>(x); std::memcpy(p, &i, 4); break; }
  }
}

double Decode(DType dt, const uint8_t* p) {
  switch (dt) {
    case DType::kF32: { float f; std::memcpy(&f, p, 4); return f; }
    case DType::kF64: { double d; std::memcpy(&d, p, 8); return d; }
    case DType::kBF16: { uint16_t h; std::memcpy(&h, p, 2); return Bf16BitsToFloat(h); }
    case DType::kF16: { uint16_t h; std::memcpy(&h, p, 2); return HalfBitsToFloat(h); }
    case DType::kI32: { int32_t i; std::memcpy(&i, p, 4); return i; }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

TensorView ViewOf(void* data, DType dtype, DeviceKind dev, const std::vector<int64_t>& shape,
                  int64_t row_pad) {
  TensorView v = MakeView(data, dtype, dev, shape.data(), static_cast<int>(shape.size()));
  if (row_pad > 0 && v.rank >= 1) {
    int64_t stride = 1;
    for (int i = v.rank - 1; i >= 0; --i) {
      v.strides[i] = stride;
      stride *= v.shape[i] + (i == v.rank - 1 ? row_pad : 0);
    }
  }
  return v;
}

// Buffer offset (elements) of logical element l.
int64_t Offset(const TensorView& v, int64_t l) {
  int64_t off = 0;
  for (int i = v.rank - 1; i >= 0; --i) {
    off += (l % v.shape[i]) * v.strides[i];
    l /= v.shape[i];
  }
  return off;
}

int64_t SpanOf(const TensorView& v) {
  if (v.numel() == 0) return 0;
  int64_t span = 1;
  for (int i = 0; i < v.rank; ++i) span += (v.shape[i] - 1) * v.strides[i];
  return span;
}

}  // namespace

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Tensor Place(Backend& b, DType dtype, const std::vector<int64_t>& shape,
             const std::vector<double>& values, int64_t row_pad) {
  Tensor t;
  t.view = ViewOf(nullptr, dtype, b.device(), shape, row_pad);
  const size_t es = DTypeSize(dtype);
  t.bytes = static_cast<size_t>(SpanOf(t.view)) * es;
  std::vector<uint8_t> host(std::max<size_t>(t.bytes, 1));
  for (size_t i = 0; i < t.bytes / es; ++i)
    Encode(dtype, std::numeric_limits<double>::quiet_NaN(), &host[i * es]);
  for (int64_t l = 0; l < t.view.numel() && l < static_cast<int64_t>(values.size()); ++l)
    Encode(dtype, values[l], &host[Offset(t.view, l) * es]);
  auto mem = b.Allocate(host.size());
  EXPECT_TRUE(mem.ok()) << mem.status();
  if (!mem.ok()) return t;
  t.mem = *mem;
  t.view.data = t.mem.get();
  const absl::Status s = b.Copy(t.mem.get(), b.device(), host.data(), DeviceKind::kCpu, host.size());
  EXPECT_TRUE(s.ok()) << s;
  return t;
}

Tensor Empty(Backend& b, DType dtype, const std::vector<int64_t>& shape, int64_t row_pad) {
  return Place(b, dtype, shape, {}, row_pad);
}

std::vector<uint8_t> FetchBytes(Backend& b, const Tensor& t) {
  std::vector<uint8_t> host(t.bytes);
  if (t.bytes == 0) return host;
  const absl::Status s = b.Copy(host.data(), DeviceKind::kCpu, t.mem.get(), b.device(), t.bytes);
  EXPECT_TRUE(s.ok()) << s;
  return host;
}

std::vector<double> Fetch(Backend& b, const Tensor& t) {
  const std::vector<uint8_t> host = FetchBytes(b, t);
  const size_t es = DTypeSize(t.view.dtype);
  std::vector<double> out(t.view.numel());
  for (int64_t l = 0; l < t.view.numel(); ++l)
    out[l] = Decode(t.view.dtype, &host[Offset(t.view, l) * es]);
  return out;
}

std::vector<double> UniformRaw(size_t n, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

std::vector<double> Uniform(size_t n, uint64_t seed, double lo, double hi) {
  std::vector<double> v = UniformRaw(n, seed, lo, hi);
  for (auto& x : v) x = Bf16BitsToFloat(DoubleToBf16Bits(x));
  return v;
}

void GpuTest::SetUp() {
  if (!CudaAvailable())
    GTEST_SKIP() << "SKIP flash_cuda test: no CUDA GPU visible to this process (or a build "
                    "without CUDA); run on a GPU machine (bench/scripts/gpu_cudaops.sh)";
  auto g = CreateBackend("cuda");
  ASSERT_TRUE(g.ok()) << g.status();
  gpu_ = std::move(*g);
  auto c = CreateBackend("cpu");
  ASSERT_TRUE(c.ok()) << c.status();
  cpu_ = std::move(*c);
}

}  // namespace flashtick::testing_gpu
