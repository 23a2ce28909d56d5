// The three ways a decode step names its position through memory instead of an op's
// arguments (kernels/ops/kv_cache.h), on the CPU reference:
// - rope with the position input rotates exactly as rope with the same position_offset;
// - kv_cache_write puts k and v in row r = row[0] and leaves every other row as it was;
// - attention decode with kv_length over a whole cache equals decode over the cache
//   sliced to that many rows, bit for bit, whatever the rows past the length hold;
// and each refuses a position outside its range with InvalidArgument.
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/kv_cache.h"
#include "tests/ops_cpu/op_test_util.h"

namespace flashtick::testing {
namespace {

TensorView Positions(std::vector<int32_t>& v) {
  return MakeView(v.data(), DType::kI32, DeviceKind::kCpu, {static_cast<int64_t>(v.size())});
}

TEST(DecodePositions, RopePositionInputEqualsOffset) {
  auto be = MakeCpu(2);
  for (int32_t p : {0, 1, 777, 23399}) {
    for (int64_t offset : {0, 5}) {
      auto x = RandomVec<float>(2 * 3 * 4 * 16, 11);
      std::vector<float> by_offset(x.size()), by_input(x.size());
      OpDesc d = Desc(Op::kRope, DType::kF32);
      d.rope.theta = 10000.0f;
      d.rope.rotary_dims = 8;
      d.rope.position_offset = offset + p;
      ASSERT_TRUE(RunOp(*be, d, {View(x, {2, 3, 4, 16})}, {View(by_offset, {2, 3, 4, 16})}).ok());
      d.rope.position_offset = offset;
      std::vector<int32_t> pos{p};
      ASSERT_TRUE(RunOp(*be, d, {View(x, {2, 3, 4, 16}), Positions(pos)},
                        {View(by_input, {2, 3, 4, 16})})
                      .ok());
      EXPECT_EQ(std::memcmp(by_offset.data(), by_input.data(), x.size() * sizeof(float)), 0)
          << "position " << p << " offset " << offset;
    }
  }
}

TEST(DecodePositions, RopeRefusesANegativeOrMalformedPosition) {
  auto be = MakeCpu(1);
  std::vector<float> x(1 * 1 * 2 * 8), y(x.size());
  OpDesc d = Desc(Op::kRope, DType::kF32);
  std::vector<int32_t> neg{-1}, none;
  std::vector<float> as_float{3.0f};
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(RunOp(*be, d, {View(x, {1, 1, 2, 8}), Positions(neg)}, {View(y, {1, 1, 2, 8})}).code(),
            kInvalid);
  EXPECT_EQ(RunOp(*be, d, {View(x, {1, 1, 2, 8}), Positions(none)}, {View(y, {1, 1, 2, 8})}).code(),
            kInvalid);
  EXPECT_EQ(RunOp(*be, d, {View(x, {1, 1, 2, 8}), View(as_float, {1})}, {View(y, {1, 1, 2, 8})})
                .code(),
            kInvalid);
}

TEST(DecodePositions, CacheWriteFillsOneRowOnly) {
  auto be = MakeCpu(1);
  const int64_t B = 2, Tk = 9, Hkv = 3, D = 4, W = 3 * Hkv * D;  // k, v: slices of a QKV row
  auto qkv = RandomVec<float>(B * W, 3);
  auto kc = RandomVec<float>(B * Tk * Hkv * D, 4), vc = RandomVec<float>(B * Tk * Hkv * D, 5);
  const auto kc0 = kc, vc0 = vc;
  TensorView k = MakeView(qkv.data() + Hkv * D, DType::kF32, DeviceKind::kCpu, {B, 1, Hkv, D});
  TensorView v = MakeView(qkv.data() + 2 * Hkv * D, DType::kF32, DeviceKind::kCpu, {B, 1, Hkv, D});
  k.strides = v.strides = {W, W, D, 1};
  std::vector<int32_t> row{6};
  ASSERT_TRUE(RunOp(*be, Desc(Op::kKvCacheWrite, DType::kF32), {k, v, Positions(row)},
                    {View(kc, {B, Tk, Hkv, D}), View(vc, {B, Tk, Hkv, D})})
                  .ok());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < Tk; ++t)
      for (int64_t e = 0; e < Hkv * D; ++e) {
        const int64_t at = (b * Tk + t) * Hkv * D + e;
        if (t == 6) {
          EXPECT_EQ(kc[at], qkv[b * W + Hkv * D + e]);
          EXPECT_EQ(vc[at], qkv[b * W + 2 * Hkv * D + e]);
        } else {
          EXPECT_EQ(kc[at], kc0[at]) << "row " << t << " changed";
          EXPECT_EQ(vc[at], vc0[at]) << "row " << t << " changed";
        }
      }
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  for (int32_t bad : {-1, 9, 1000}) {
    row[0] = bad;
    EXPECT_EQ(RunOp(*be, Desc(Op::kKvCacheWrite, DType::kF32), {k, v, Positions(row)},
                    {View(kc, {B, Tk, Hkv, D}), View(vc, {B, Tk, Hkv, D})})
                  .code(),
              kInvalid)
        << "row " << bad;
  }
  std::vector<float> small(B * Tk * (Hkv - 1) * D);
  row[0] = 0;
  EXPECT_EQ(RunOp(*be, Desc(Op::kKvCacheWrite, DType::kF32), {k, v, Positions(row)},
                  {View(small, {B, Tk, Hkv - 1, D}), View(vc, {B, Tk, Hkv, D})})
                .code(),
            kInvalid);
}

TEST(DecodePositions, KvLengthEqualsTheSlicedCache) {
  auto be = MakeCpu(2);
  const int64_t B = 3, Tk = 700, H = 4, Hkv = 2, D = 16;
  auto q = RandomVec<double>(B * H * D, 21);
  auto kc = RandomVec<double>(B * Tk * Hkv * D, 22), vc = RandomVec<double>(B * Tk * Hkv * D, 23);
  std::vector<int32_t> lengths{700, 256, 1};  // whole, a chunk boundary, one key
  std::vector<double> work(AttentionDecodeWorkFloats(B, H, Tk, D));
  std::vector<double> o_len(B * H * D);
  OpDesc d = Desc(Op::kAttentionDecode, DType::kF64);
  ASSERT_TRUE(RunOp(*be, d,
                    {View(q, {B, 1, H, D}), View(kc, {B, Tk, Hkv, D}), View(vc, {B, Tk, Hkv, D}),
                     View(work, {static_cast<int64_t>(work.size())}), Positions(lengths)},
                    {View(o_len, {B, 1, H, D})})
                  .ok());
  for (int64_t b = 0; b < B; ++b) {
    // Sequence b alone, over its first lengths[b] rows.
    TensorView qb = MakeView(q.data() + b * H * D, DType::kF64, DeviceKind::kCpu, {1, 1, H, D});
    TensorView kb = MakeView(kc.data() + b * Tk * Hkv * D, DType::kF64, DeviceKind::kCpu,
                             {1, lengths[b], Hkv, D});
    TensorView vb = MakeView(vc.data() + b * Tk * Hkv * D, DType::kF64, DeviceKind::kCpu,
                             {1, lengths[b], Hkv, D});
    std::vector<double> o(H * D);
    ASSERT_TRUE(RunOp(*be, d, {qb, kb, vb}, {View(o, {1, 1, H, D})}).ok());
    EXPECT_EQ(std::memcmp(o.data(), o_len.data() + b * H * D, o.size() * sizeof(double)), 0)
        << "sequence " << b;
  }
  // Rows past the length do not count: change them and the result stays.
  for (int64_t t = 300; t < Tk; ++t) kc[(1 * Tk + t) * Hkv * D] += 100.0;
  std::vector<double> again(o_len.size());
  ASSERT_TRUE(RunOp(*be, d,
                    {View(q, {B, 1, H, D}), View(kc, {B, Tk, Hkv, D}), View(vc, {B, Tk, Hkv, D}),
                     View(work, {static_cast<int64_t>(work.size())}), Positions(lengths)},
                    {View(again, {B, 1, H, D})})
                  .ok());
  EXPECT_EQ(std::memcmp(again.data() + H * D, o_len.data() + H * D, H * D * sizeof(double)), 0);
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  for (int32_t bad : {0, -3, 701}) {
    std::vector<int32_t> l{700, bad, 5};
    EXPECT_EQ(RunOp(*be, d,
                    {View(q, {B, 1, H, D}), View(kc, {B, Tk, Hkv, D}), View(vc, {B, Tk, Hkv, D}),
                     View(work, {static_cast<int64_t>(work.size())}), Positions(l)},
                    {View(again, {B, 1, H, D})})
                  .code(),
              kInvalid)
        << "kv_length " << bad;
  }
  std::vector<int32_t> short_list{700, 5};  // fewer lengths than sequences
  EXPECT_EQ(RunOp(*be, d,
                  {View(q, {B, 1, H, D}), View(kc, {B, Tk, Hkv, D}), View(vc, {B, Tk, Hkv, D}),
                   View(work, {static_cast<int64_t>(work.size())}), Positions(short_list)},
                  {View(again, {B, 1, H, D})})
                .code(),
            kInvalid);
}

}  // namespace
}  // namespace flashtick::testing
