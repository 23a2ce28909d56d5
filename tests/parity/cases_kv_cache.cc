// Parity cases for kv_cache_write (kernels/ops/kv_cache.h): the new K and V rows land in
// row r of the caches and nothing else changes (the caches start from generated values,
// so a write to a wrong row or a stray element shows in the comparison). Rows: the first,
// one in the middle, the last; k and v as slices of a fused QKV row (strided heads, as
// the decode step passes them); GQA-sized Hkv; D = 16 and 256.
#include <memory>

#include "absl/strings/str_cat.h"
#include "tests/parity/ops_case.h"

namespace flashtick::parity {
namespace {

struct CacheShape {
  int64_t B, Tk, Hkv, D, row;
  bool fused = false;  // k, v strided as slices of a [B, 1, H + 2·Hkv, D] QKV row (H = Hkv)
};

const CacheShape kShapes[] = {
    {1, 256, 2, 64, 0}, {1, 256, 2, 64, 137, true}, {1, 512, 4, 128, 511},
    {2, 64, 1, 16, 33}, {1, 32, 2, 256, 31, true}, {3, 100, 3, 32, 99},
};

}  // namespace

FT_PARITY_CASES(kv_cache_write) {
  CaseList v;
  for (const CacheShape& s : kShapes) {
    TensorSpec k = Spec("k", {s.B, 1, s.Hkv, s.D}), vv = Spec("v", {s.B, 1, s.Hkv, s.D});
    if (s.fused) {
      const int64_t row = 3 * s.Hkv * s.D;
      k.strides = vv.strides = {row, row, s.D, 1};
    }
    const double r = static_cast<double>(s.row);
    std::vector<TensorSpec> in{k, vv, Spec("row", {1}, Role::kI32, r, r + 0.5)};
    std::vector<TensorSpec> out{Accumulate(Spec("Kcache", {s.B, s.Tk, s.Hkv, s.D})),
                                Accumulate(Spec("Vcache", {s.B, s.Tk, s.Hkv, s.D}))};
    std::string vars = absl::StrCat("B=", s.B, ",Tk=", s.Tk, ",Hkv=", s.Hkv, ",D=", s.D,
                                    ",row=", s.row);
    if (s.fused) absl::StrAppend(&vars, ",fused_qkv=1");
    v.push_back(std::make_unique<OpCase>("kv_cache_write", vars, DescOf(Op::kKvCacheWrite),
                                         std::move(in), std::move(out)));
  }
  return v;
}

}  // namespace flashtick::parity
