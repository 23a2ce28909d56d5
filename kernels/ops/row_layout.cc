// RowLayout validation shared by the row-wise ops of every backend.
#include "kernels/ops/row_layout.h"

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::StatusOr<RowLayout> RowsOf(const TensorView& t, const char* op, const char* name) {
  if (t.rank < 1 || t.rank > kMaxRank)
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", name, " must have rank 1..", kMaxRank, ", got ", t.rank));
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] < 0)
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": ", name, " has a negative dim: ", t.DebugString()));
    if (t.strides[i] < 0)
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": ", name, " has a negative stride: ", t.DebugString()));
  }
  if (t.numel() > 0 && t.data == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " has no data"));
  RowLayout r;
  r.cols = t.dim(-1);
  if (r.cols > 1 && t.stride(-1) != 1)
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": the last dim of ", name, " must be contiguous (stride 1), got ", t.DebugString(),
        " with stride ", t.stride(-1)));
  // Leading dims of size 1 never step, so their strides do not matter; the rest
  // must each step by whole rows: stride(i) = stride(next)·shape(next).
  r.rows = 1;
  int64_t inner_shape = 0, inner_stride = 0;
  bool have_inner = false;
  r.row_stride = r.cols;
  for (int i = t.rank - 2; i >= 0; --i) {
    r.rows *= t.shape[i];
    if (t.shape[i] == 1) continue;
    if (!have_inner) {
      r.row_stride = t.strides[i];
    } else if (t.strides[i] != inner_stride * inner_shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": ", name, " ", t.DebugString(),
          " does not collapse to rows (leading dims must be a whole number of rows apart)"));
    }
    have_inner = true;
    inner_shape = t.shape[i];
    inner_stride = t.strides[i];
  }
  if (r.rows > 1 && r.row_stride < r.cols)
    return absl::InvalidArgumentError(absl::StrCat(op, ": rows of ", name, " overlap (row stride ",
                                                   r.row_stride, " < ", r.cols, " columns)"));
  return r;
}

absl::Status CheckSameShape(const TensorView& a, const TensorView& b, const char* op,
                            const char* name_a, const char* name_b, bool same_dtype) {
  bool same = a.rank == b.rank;
  for (int i = 0; same && i < a.rank; ++i) same = a.shape[i] == b.shape[i];
  if (!same)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name_a, " and ", name_b,
                                                   " must have the same shape, got ",
                                                   a.DebugString(), " and ", b.DebugString()));
  if (same_dtype && a.dtype != b.dtype)
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name_a, " and ", name_b,
                                                   " must have the same dtype, got ",
                                                   a.DebugString(), " and ", b.DebugString()));
  return absl::OkStatus();
}

namespace {
// [first, last) byte range a view can touch.
void Extent(const TensorView& t, uintptr_t* first, uintptr_t* last) {
  int64_t hi = 0;
  for (int i = 0; i < t.rank; ++i) hi += (t.shape[i] - 1) * t.strides[i];
  *first = reinterpret_cast<uintptr_t>(t.data);
  *last = *first + static_cast<uintptr_t>(hi + 1) * DTypeSize(t.dtype);
}
}  // namespace

bool MayOverlap(const TensorView& a, const TensorView& b) {
  if (a.numel() == 0 || b.numel() == 0 || a.data == nullptr || b.data == nullptr) return false;
  uintptr_t a0, a1, b0, b1;
  Extent(a, &a0, &a1);
  Extent(b, &b0, &b1);
  return a0 < b1 && b0 < a1;
}

bool SameView(const TensorView& a, const TensorView& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; ++i)
    if (a.shape[i] != b.shape[i] || (a.shape[i] != 1 && a.strides[i] != b.strides[i])) return false;
  return true;
}

absl::Status CheckArity(const char* op, size_t n_in, size_t want_in, size_t n_out,
                        size_t want_out) {
  if (n_in != want_in || n_out != want_out)
    return absl::InvalidArgumentError(absl::StrCat(op, ": expects ", want_in, " inputs and ",
                                                   want_out, " outputs, got ", n_in, " and ",
                                                   n_out));
  return absl::OkStatus();
}

}  // namespace flashtick
