// RowLayout: a tensor seen as `rows` rows of `cols` contiguous elements, `row_stride`
// elements apart. Row-wise ops (AddBias, Add, Cast, LayerNorm, Gelu, Softmax) accept
// any view that collapses to this form: the last dim contiguous and every leading
// dim a whole number of rows, e.g. [B, T, C] contiguous, or the strided [B, C] view
// of the last step of each sequence (row stride T·C). Shared by every backend so
// they all reject the same bad views with the same message.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "kernels/tensor.h"

namespace flashtick {

struct RowLayout {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;  // elements between row starts
};

// `op` and `name` ("layernorm", "X") make the error say which tensor is wrong.
absl::StatusOr<RowLayout> RowsOf(const TensorView& t, const char* op, const char* name);

// The same shape (dim by dim) and, when `same_dtype`, the same dtype.
absl::Status CheckSameShape(const TensorView& a, const TensorView& b, const char* op,
                            const char* name_a, const char* name_b, bool same_dtype = true);

// True when the byte ranges that two views can touch overlap (for "must not alias").
bool MayOverlap(const TensorView& a, const TensorView& b);
// True when a and b are the very same view (data, dtype, shape, strides): in-place use.
bool SameView(const TensorView& a, const TensorView& b);

// Checks the number of inputs and outputs an op received.
absl::Status CheckArity(const char* op, size_t n_in, size_t want_in, size_t n_out,
                        size_t want_out);

}  // namespace flashtick
