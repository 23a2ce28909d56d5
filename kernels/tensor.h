// TensorView: a non-owning view of a dense tensor on one device, and the dtypes
// flashtick's ops accept. Shapes are row-major; strides are in elements, so an op
// can read a slice (e.g. Q, K, V straight out of a fused [B, T, 3, H, D] buffer).
// Dimension letters are fixed project-wide: B batch, H heads, T ticks, D head dim,
// C width, F features.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace flashtick {

enum class DType : uint8_t { kF32, kF64, kBF16, kF16, kI32 };
enum class DeviceKind : uint8_t { kCpu, kCuda };

constexpr int kMaxRank = 5;

size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::kF32;
  DeviceKind device = DeviceKind::kCpu;
  int rank = 0;
  std::array<int64_t, kMaxRank> shape{};
  std::array<int64_t, kMaxRank> strides{};  // in elements

  int64_t dim(int i) const { return shape[i < 0 ? i + rank : i]; }
  int64_t stride(int i) const { return strides[i < 0 ? i + rank : i]; }
  int64_t numel() const;
  size_t bytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype); }
  bool contiguous() const;
  std::string DebugString() const;  // "bf16[1,23400,12,64] cuda"

  template <typename T>
  T* as() const { return static_cast<T*>(data); }
};

// A contiguous row-major view over `data`.
TensorView MakeView(void* data, DType dtype, DeviceKind device,
                    std::initializer_list<int64_t> shape);
TensorView MakeView(void* data, DType dtype, DeviceKind device, const int64_t* shape, int rank);

}  // namespace flashtick
