// TensorView helpers: sizes, contiguity and a readable description for errors.
#include "kernels/tensor.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace flashtick {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF64: return 8;
    case DType::kBF16: return 2;
    case DType::kF16: return 2;
    case DType::kI32: return 4;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "fp32";
    case DType::kF64: return "fp64";
    case DType::kBF16: return "bf16";
    case DType::kF16: return "fp16";
    case DType::kI32: return "int32";
  }
  return "?";
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= shape[i];
  return n;
}

bool TensorView::contiguous() const {
  int64_t expect = 1;
  for (int i = rank - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

std::string TensorView::DebugString() const {
  std::vector<int64_t> dims(shape.begin(), shape.begin() + rank);
  return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(dims, ","), "] ",
                      device == DeviceKind::kCuda ? "cuda" : "cpu");
}

TensorView MakeView(void* data, DType dtype, DeviceKind device, const int64_t* shape, int rank) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.device = device;
  v.rank = rank;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    v.shape[i] = shape[i];
    v.strides[i] = stride;
    stride *= shape[i];
  }
  return v;
}

TensorView MakeView(void* data, DType dtype, DeviceKind device,
                    std::initializer_list<int64_t> shape) {
  return MakeView(data, dtype, device, shape.begin(), static_cast<int>(shape.size()));
}

}  // namespace flashtick
