// HalfEmulationBackend: dtype-contract checks, strided gather to fp32, CPU reference,
// rounding scatter back (tests/model/half_emulation_backend.h).
#include "tests/model/half_emulation_backend.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/common/half.h"

namespace flashtick::testing {
namespace {

bool IsHalf(DType d) { return d == DType::kBF16 || d == DType::kF16; }

// Expected dtype of each tensor (inputs then outputs) for a half-precision run:
// 'h' the half dtype, 'f' fp32.
const char* Pattern(const OpDesc& desc) {
  switch (desc.op) {
    case Op::kMatmul:
      return desc.matmul.bias ? "hhfh" : "hhh";  // A, B [, b fp32], C
    case Op::kAddBias: return "hfh";
    case Op::kAdd: return "hhh";
    case Op::kLayerNorm: return "hffhff";
    case Op::kGelu:
    case Op::kSoftmax:
    case Op::kRope: return "hh";
    case Op::kAttentionFwd: return "hhhhf";
    case Op::kAttentionDecode: return "hhhh";
    default: return nullptr;
  }
}

// Calls fn(offset) for the element offset of every index of the view, row-major.
template <typename Fn>
void ForEach(const TensorView& t, Fn&& fn) {
  if (t.numel() == 0) return;
  int64_t idx[kMaxRank] = {};
  for (int64_t n = 0, total = t.numel(); n < total; ++n) {
    int64_t off = 0;
    for (int d = 0; d < t.rank; ++d) off += idx[d] * t.strides[d];
    fn(off);
    for (int d = t.rank - 1; d >= 0 && ++idx[d] == t.shape[d]; --d) idx[d] = 0;
  }
}

float Load(const TensorView& t, int64_t off) {
  const char* p = static_cast<const char*>(t.data);
  switch (t.dtype) {
    case DType::kF32: return reinterpret_cast<const float*>(p)[off];
    case DType::kBF16: return Bf16BitsToFloat(reinterpret_cast<const uint16_t*>(p)[off]);
    case DType::kF16: return HalfBitsToFloat(reinterpret_cast<const uint16_t*>(p)[off]);
    default: return 0;
  }
}

void Store(const TensorView& t, int64_t off, float v) {
  char* p = static_cast<char*>(t.data);
  switch (t.dtype) {
    case DType::kF32: reinterpret_cast<float*>(p)[off] = v; break;
    case DType::kBF16: reinterpret_cast<uint16_t*>(p)[off] = FloatToBf16Bits(v); break;
    case DType::kF16: reinterpret_cast<uint16_t*>(p)[off] = FloatToHalfBits(v); break;
    default: break;
  }
}

}  // namespace

absl::Status HalfEmulationBackend::Run(const OpDesc& desc, absl::Span<const TensorView> inputs,
                                       absl::Span<const TensorView> outputs) {
  if (desc.op == Op::kCast || !IsHalf(desc.dtype)) return cpu_.Run(desc, inputs, outputs);
  const char* pattern = Pattern(desc);
  if (pattern == nullptr)
    return absl::UnimplementedError(absl::StrCat("half_emulation: no ", OpName(desc.op)));
  std::vector<TensorView> all(inputs.begin(), inputs.end());
  all.insert(all.end(), outputs.begin(), outputs.end());
  if (std::strlen(pattern) != all.size())
    return absl::InvalidArgumentError(absl::StrCat("half_emulation: ", OpName(desc.op), " got ",
                                                   all.size(), " tensors"));
  for (size_t i = 0; i < all.size(); ++i) {
    const DType want = pattern[i] == 'h' ? desc.dtype : DType::kF32;
    if (all[i].dtype != want)
      return absl::InvalidArgumentError(absl::StrCat("half_emulation: ", OpName(desc.op), " tensor ", i,
                                                     " is ", all[i].DebugString(), ", contract says ",
                                                     DTypeName(want)));
  }
  ++half_ops_;
  // fp32 contiguous copies; a view passed twice (in place) shares one copy.
  std::vector<std::vector<float>> bufs(all.size());
  std::vector<TensorView> f32(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    size_t same = i;
    for (size_t j = 0; j < i; ++j)
      if (all[j].data == all[i].data && all[j].dtype == all[i].dtype && all[j].strides == all[i].strides)
        same = j;
    if (same != i) {
      f32[i] = f32[same];
      continue;
    }
    bufs[i].resize(static_cast<size_t>(all[i].numel()));
    size_t k = 0;
    ForEach(all[i], [&](int64_t off) { bufs[i][k++] = Load(all[i], off); });
    f32[i] = MakeView(bufs[i].data(), DType::kF32, DeviceKind::kCpu, all[i].shape.data(), all[i].rank);
  }
  OpDesc d = desc;
  d.dtype = DType::kF32;
  const absl::Status s = cpu_.Run(d, absl::MakeConstSpan(f32.data(), inputs.size()),
                                  absl::MakeConstSpan(f32.data() + inputs.size(), outputs.size()));
  if (!s.ok()) return s;
  for (size_t i = inputs.size(); i < all.size(); ++i) {
    const float* src = static_cast<const float*>(f32[i].data);
    size_t k = 0;
    ForEach(all[i], [&](int64_t off) { Store(all[i], off, src[k++]); });
  }
  return absl::OkStatus();
}

}  // namespace flashtick::testing
