// CPU reference attention decode (Op::kAttentionDecode): one new query row per (b, h)
// against a K/V cache of Tk rows, all visible. Flash-decoding split: the cache is cut
// into chunks of kDecodeChunk keys, each (b, h, chunk) task produces a partial
// (m, l, unnormalised o) with an online softmax, and a second pass merges the chunks:
//   m = max_c m_c;  l = Σ_c e^{m_c − m} l_c;  o = Σ_c e^{m_c − m} o_c / l
// so a long cache keeps every thread busy even when B·H is small. Extra memory is
// O(B·H·(Tk / kDecodeChunk)·D). fp64 accumulation. With kv_length, sequence b sees its
// first kv_length[b] rows: chunks past them are empty (m = −inf, l = 0) and merge with
// weight 0.
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/cpu/attention_tiles.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/ops/attention.h"

namespace flashtick::cpu {
namespace {

// 256 keys per chunk: enough work per task to amortise the merge, and a 23,400-row
// cache still splits into ~92 chunks per head.
constexpr int64_t kDecodeChunk = 256;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

template <typename T>
void DecodeImpl(const AttentionShape& s, double scale, const std::vector<int64_t>& lengths, In in,
                Out out, ThreadPool* pool) {
  const auto q = attn::Rows<const T>(in[0]);
  const auto k = attn::Rows<const T>(in[1]);
  const auto v = attn::Rows<const T>(in[2]);
  const auto o = attn::Rows<T>(out[0]);
  const int64_t D = s.D, group = s.H / s.Hkv, Tk = s.T;
  const int64_t nchunks = attn::CeilDiv(Tk, kDecodeChunk);
  std::vector<double> part_m(s.B * s.H * nchunks), part_l(s.B * s.H * nchunks);
  std::vector<double> part_o(s.B * s.H * nchunks * D);

  pool->ParallelFor(s.B * s.H * nchunks, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> qi(D), kt(kDecodeChunk * D), vt(kDecodeChunk * D), sc(kDecodeChunk);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t c = item % nchunks, bh = item / nchunks, b = bh / s.H, h = bh % s.H;
      const int64_t hk = h / group, j0 = c * kDecodeChunk;
      const int64_t nk = std::max<int64_t>(0, std::min(kDecodeChunk, lengths[b] - j0));
      double* oc = &part_o[item * D];
      std::fill(oc, oc + D, 0.0);
      if (nk == 0) {  // a chunk past this sequence's rows: weight 0 in the merge
        part_m[item] = kNegInf;
        part_l[item] = 0.0;
        continue;
      }
      attn::LoadRows(q, b, h, 0, 1, D, scale, qi.data());
      attn::LoadRows(k, b, hk, j0, nk, D, 1.0, kt.data());
      attn::LoadRows(v, b, hk, j0, nk, D, 1.0, vt.data());
      double m = kNegInf, l = 0.0;
      for (int64_t j = 0; j < nk; ++j) m = std::max(m, sc[j] = attn::Dot(qi.data(), &kt[j * D], D));
      for (int64_t j = 0; j < nk; ++j) {
        const double p = std::exp(sc[j] - m);  // m is finite: every cached key is visible
        l += p;
        attn::Axpy(p, &vt[j * D], oc, D);
      }
      part_m[item] = m;
      part_l[item] = l;
    }
  });

  pool->ParallelFor(s.B * s.H, 16, [&](int64_t begin, int64_t end) {
    std::vector<double> acc(D);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t base = bh * nchunks;
      double m = kNegInf, l = 0.0;
      for (int64_t c = 0; c < nchunks; ++c) m = std::max(m, part_m[base + c]);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t c = 0; c < nchunks; ++c) {
        if (part_l[base + c] == 0.0) continue;  // an empty chunk
        const double w = std::exp(part_m[base + c] - m);  // rescale chunk c to the global max
        l += w * part_l[base + c];
        attn::Axpy(w, &part_o[(base + c) * D], acc.data(), D);
      }
      attn::StoreRow(o, bh / s.H, 0, bh % s.H, D, 1.0 / l, acc.data());
    }
  });
}

}  // namespace

absl::Status AttentionDecode(const OpDesc& desc, In in, Out out, CpuContext& ctx) {
  RETURN_IF_ERROR(CheckAttentionArity(Op::kAttentionDecode, in.size(), out.size()));
  AttentionShape s;
  RETURN_IF_ERROR(CheckAttentionDecodeArgs(in[0], in[1], in[2], &s));
  const DType dt = in[0].dtype;
  RETURN_IF_ERROR(attn::CheckCpuAttentionDType(Op::kAttentionDecode, dt));
  RETURN_IF_ERROR(CheckAttentionTensor("o", out[0], s.B, 1, s.H, s.D, dt));
  const double scale = AttentionScale(desc.attention, s.D);
  const TensorView* kv_length = nullptr;
  RETURN_IF_ERROR(DecodeKvLengthInput(in, s.B, &kv_length));
  std::vector<int64_t> lengths(s.B, s.T);
  if (kv_length != nullptr) {
    for (int64_t b = 0; b < s.B; ++b) {
      lengths[b] = kv_length->as<int32_t>()[b];
      if (lengths[b] < 1 || lengths[b] > s.T)
        return absl::InvalidArgumentError(absl::StrCat(
            "attention_decode: kv_length[", b, "] = ", lengths[b], " is outside [1, ", s.T,
            "] (the cache's rows)"));
    }
  }
  if (dt == DType::kF32)
    DecodeImpl<float>(s, scale, lengths, in, out, ctx.pool);
  else
    DecodeImpl<double>(s, scale, lengths, in, out, ctx.pool);
  return absl::OkStatus();
}

}  // namespace flashtick::cpu
