// Parity cases for Rope (kernels/ops/rope.h): D ∈ {64, 128}; positions late in a
// 23,400-step day (offset 23,000), where an fp32 angle would be off by ~1e-3 rad and
// fail the fp32 bound; the inverse rotation (the VJP); X as the q slice of a fused
// [B, T, 3, H, D] projection (NaN in the gaps); a head dim that is not a whole number
// of 16-byte vectors (D = 10: the scalar path); partial rotary (R < D: the tail of each
// head passes through), on the vector and the scalar path; the position read from the
// optional position input (a decode step's call).
#include <memory>

#include "absl/strings/str_cat.h"
#include "tests/parity/ops_case.h"

namespace flashtick::parity {
namespace {

struct RopeShape {
  int64_t B, T, H, D;
  int64_t offset = 0;
  bool inverse = false;
  bool fused = false;
  int64_t rotary = -1;  // rotary_dims
  int64_t position = -1;  // ≥ 0: the optional position input, holding this value
};

const RopeShape kShapes[] = {
    {2, 300, 4, 64},        {1, 64, 2, 128, 23000}, {2, 50, 3, 64, 100, true},
    {2, 40, 4, 64, 0, false, true}, {2, 10, 3, 10, 7},
    {2, 70, 3, 64, 23000, false, false, 32}, {2, 30, 2, 64, 9, true, true, 16},
    {1, 12, 3, 10, 5, false, false, 6},
    // The decode step's call: one row of q and k together at a position read from the
    // position input (kernels/ops/rope.h), late in a day, and with an offset as well.
    {1, 1, 6, 64, 0, false, false, -1, 23399}, {1, 1, 6, 128, 0, false, false, -1, 7},
    {2, 5, 3, 64, 100, false, false, 32, 20000},
};

}  // namespace

FT_PARITY_CASES(rope) {
  CaseList v;
  for (const RopeShape& s : kShapes) {
    OpDesc d = DescOf(Op::kRope);
    d.rope.theta = 10000.0f;
    d.rope.position_offset = s.offset;
    d.rope.inverse = s.inverse;
    d.rope.rotary_dims = s.rotary;
    TensorSpec x = Spec("X", {s.B, s.T, s.H, s.D});
    if (s.fused) x.strides = {s.T * 3 * s.H * s.D, 3 * s.H * s.D, s.D, 1};
    std::string vars = absl::StrCat("B=", s.B, ",T=", s.T, ",H=", s.H, ",D=", s.D,
                                    ",offset=", s.offset, ",inverse=", s.inverse);
    if (s.fused) absl::StrAppend(&vars, ",fused_qkv=1");
    if (s.rotary >= 0) absl::StrAppend(&vars, ",rotary_dims=", s.rotary);
    std::vector<TensorSpec> in{x};
    if (s.position >= 0) {
      absl::StrAppend(&vars, ",position_input=", s.position);
      const double p = static_cast<double>(s.position);
      in.push_back(Spec("position", {1}, Role::kI32, p, p + 0.5));  // floor: exactly p
    }
    v.push_back(std::make_unique<OpCase>("rope", vars, d, std::move(in),
                                         std::vector<TensorSpec>{Spec("Y", {s.B, s.T, s.H, s.D})}));
  }
  return v;
}

}  // namespace flashtick::parity
