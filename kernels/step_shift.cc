// ShiftStepsLater / ShiftStepsEarlier (kernels/step_shift.h).
#include "kernels/step_shift.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {
namespace {

// Rows [first, first + n) of a [rows, cols] view with the view's row stride.
TensorView Rows(const TensorView& t, int64_t first, int64_t n) {
  TensorView r = t;
  r.data = static_cast<char*>(t.data) + first * t.strides[0] * static_cast<int64_t>(DTypeSize(t.dtype));
  r.shape[0] = n;
  return r;
}

absl::Status CheckShiftArgs(const TensorView& src, const TensorView& dst, int64_t B, int64_t T,
                            const char* op) {
  if (src.rank != 2 || dst.rank != 2 || src.shape[0] != dst.shape[0] || src.shape[1] != dst.shape[1] ||
      src.dtype != dst.dtype || src.shape[0] != B * T || B < 0 || T < 1 || src.strides[1] != 1 ||
      dst.strides[1] != 1)
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": wants two [B·T, cols] views of one dtype with contiguous rows, B = ", B, ", T = ", T,
        "; got ", src.DebugString(), " and ", dst.DebugString()));
  return absl::OkStatus();
}

// dst rows [to, to + n) = src rows [from, from + n) of every sequence, then the one row
// `zero` of every sequence's dst cleared.
absl::Status Shift(Backend& be, const TensorView& src, const TensorView& dst, int64_t B, int64_t T,
                   int64_t from, int64_t to, int64_t zero) {
  OpDesc cast;
  cast.op = Op::kCast;
  cast.dtype = src.dtype;
  const size_t row_bytes = static_cast<size_t>(dst.shape[1]) * DTypeSize(dst.dtype);
  for (int64_t b = 0; b < B; ++b) {
    if (T > 1) {
      const TensorView in[] = {Rows(src, b * T + from, T - 1)};
      const TensorView out[] = {Rows(dst, b * T + to, T - 1)};
      RETURN_IF_ERROR(be.Run(cast, in, out));
    }
    RETURN_IF_ERROR(be.Zero(Rows(dst, b * T + zero, 1).data, row_bytes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ShiftStepsLater(Backend& be, const TensorView& src, const TensorView& dst, int64_t B,
                             int64_t T) {
  RETURN_IF_ERROR(CheckShiftArgs(src, dst, B, T, "shift steps later"));
  return Shift(be, src, dst, B, T, /*from=*/0, /*to=*/1, /*zero=*/0);
}

absl::Status ShiftStepsEarlier(Backend& be, const TensorView& src, const TensorView& dst,
                               int64_t B, int64_t T) {
  RETURN_IF_ERROR(CheckShiftArgs(src, dst, B, T, "shift steps earlier"));
  return Shift(be, src, dst, B, T, /*from=*/1, /*to=*/0, /*zero=*/T - 1);
}

TensorView ColumnBlock(const TensorView& buf, int64_t col, int64_t cols) {
  TensorView v = buf;
  v.data = static_cast<char*>(buf.data) + col * static_cast<int64_t>(DTypeSize(buf.dtype));
  v.rank = 2;
  v.shape = {buf.shape[0], cols, 0, 0, 0};
  v.strides = {buf.strides[0], 1, 0, 0, 0};
  return v;
}

}  // namespace flashtick
