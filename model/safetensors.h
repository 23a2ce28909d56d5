// Safetensors: the checkpoint format of Hugging Face (github.com/huggingface/safetensors),
// read and written byte-compatibly with its reference implementation:
//   [8 bytes] N, the header length, unsigned little-endian
//   [N bytes] JSON object: {"<name>": {"dtype": "F32", "shape": [2, 3],
//             "data_offsets": [begin, end]}, ..., "__metadata__": {"k": "v"}}
//             (may be padded with trailing spaces; we pad to a multiple of 8)
//   [rest]    the data buffer; offsets are relative to its start, tensors are
//             row-major little-endian, and together they cover it with no gap or overlap.
// Supported dtypes: F32, F64, BF16, F16, I32. Parse validates everything (lengths,
// JSON, keys, dtypes, shapes, offsets, coverage, duplicate names) and returns an
// InvalidArgument/DataLoss error naming the problem: a corrupt file never crashes us.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "kernels/tensor.h"

namespace flashtick {

struct SafetensorsTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::string data;  // numel·DTypeSize(dtype) bytes, row-major, little-endian

  int64_t numel() const;
};

class Safetensors {
 public:
  // The largest header the reference implementation accepts (100 MB).
  static constexpr uint64_t kMaxHeaderBytes = 100'000'000;

  static absl::StatusOr<Safetensors> Parse(absl::string_view bytes);
  static absl::StatusOr<Safetensors> ReadFile(const std::string& path);
  absl::StatusOr<std::string> Serialize() const;
  // Serialize, then write atomically (temp file, fsync, rename; common/file_io.h).
  absl::Status WriteFile(const std::string& path) const;

  // Adds (or replaces) a tensor, copying numel·DTypeSize(dtype) bytes from data.
  absl::Status Add(const std::string& name, DType dtype, std::vector<int64_t> shape,
                   const void* data);
  // The tensor `name` as fp32 (converting from F64/BF16/F16; I32 is refused), after
  // checking its shape is `expect_shape`. Errors name the tensor and both shapes.
  absl::StatusOr<std::vector<float>> ToFloat32(const std::string& name,
                                               absl::Span<const int64_t> expect_shape) const;

  const std::map<std::string, SafetensorsTensor>& tensors() const { return tensors_; }
  std::map<std::string, std::string>& metadata() { return metadata_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  std::map<std::string, SafetensorsTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

// "F32", "BF16", ... for a supported dtype.
const char* SafetensorsDTypeName(DType dtype);

}  // namespace flashtick
