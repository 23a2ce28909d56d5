// What one Transformer::Step asks of its backend besides compute (model/
// transformer_step.cc), counted by a Backend that forwards to the CPU reference: a
// step within the cache's capacity allocates nothing (device or host), never uses the
// blocking Copy, uploads its row and position in one copy from the same host staging
// every step (the state's, pinned on CUDA: Backend::AllocateHostStaging) and downloads
// the probabilities with CopyAsync, and waits on the backend exactly once. Every
// attention decode gets the state's workspace as its 4th input, large enough for the
// keys it reads (kernels/ops/attention.h), so the CUDA launcher allocates no partials
// either, and its kv_length as the 5th (the cache is passed whole).
// Growth past the capacity allocates the new caches and workspace once. The counted
// steps' probabilities equal those of the plain CPU backend bit for bit.
// CUDA's side of these calls (pinned staging, CopyAsync without a wait, the decode
// launcher taking the workspace) is compiled by the CUDA build and measured on the GPU
// (bench/scripts/gpu_serve.sh); this test pins down what the model asks for.
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/ops/attention.h"
#include "model/decode_state.h"
#include "model/transformer.h"
#include "tests/model/forwarding_backend.h"
#include "tests/model/small_decode_model.h"

namespace flashtick {
namespace {

// Per-step counts of what the model asked of the backend.
struct Counts {
  int allocations = 0, host_stagings = 0, host_to_host = 0, blocking_copies = 0, syncs = 0,
      decodes = 0, decodes_with_work = 0, decodes_with_length = 0;
  std::vector<const void*> async_src, async_dst;  // CopyAsync's arguments, in order
};

class CountingBackend final : public testing::ForwardingCpuBackend {
 public:
  absl::Status Run(const OpDesc& d, absl::Span<const TensorView> in,
                   absl::Span<const TensorView> out) override {
    if (d.op == Op::kAttentionDecode) {
      ++n.decodes;
      const int64_t Tk = in[1].dim(1), H = in[0].dim(2), D = in[0].dim(3);
      if (in.size() >= 4 && in[3].dtype == DType::kF32 &&
          in[3].numel() >= AttentionDecodeWorkFloats(1, H, Tk, D))
        ++n.decodes_with_work;
      if (in.size() == 5 && in[4].dtype == DType::kI32) ++n.decodes_with_length;
    }
    return cpu_.Run(d, in, out);
  }
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes) override {
    ++n.allocations;
    return cpu_.Allocate(bytes);
  }
  absl::StatusOr<std::shared_ptr<void>> AllocateHostStaging(size_t bytes) override {
    ++n.host_stagings;
    return Backend::AllocateHostStaging(bytes);
  }
  // The CPU backend's device is kCpu too, so every Copy reads as host to host; the
  // model's own host-to-host copies would be a bug, so Copy is counted as one kind.
  absl::Status Copy(void* dst, DeviceKind dd, const void* src, DeviceKind sd,
                    size_t bytes) override {
    ++n.blocking_copies;
    return cpu_.Copy(dst, dd, src, sd, bytes);
  }
  absl::Status CopyAsync(void* dst, DeviceKind dd, const void* src, DeviceKind sd,
                         size_t bytes) override {
    n.async_src.push_back(src);
    n.async_dst.push_back(dst);
    return cpu_.Copy(dst, dd, src, sd, bytes);
  }
  absl::Status Synchronize() override {
    ++n.syncs;
    return cpu_.Synchronize();
  }

  Counts n;
};

ModelConfig Config() { return testing::SmallDecodeConfig(); }
std::vector<float> Rows(int64_t T, int64_t F) { return testing::RandomRows(T, F, 7); }

TEST(DecodeStepTransfers, AStepAllocatesNothingAndWaitsOnce) {
  CountingBackend be;
  auto m = Transformer::InitRandom(Config(), 3, &be);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE((*m)->SupportsDecode());
  const int64_t F = (*m)->config().features, L = (*m)->config().layers;
  const int64_t T = 40;  // crosses the capacity twice: 16 → 32 → 64
  be.n = Counts();
  auto state = DecodeState::Create(**m, 16);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(be.n.host_stagings, 1);  // the staging block, once, with the state
  const std::vector<float> rows = Rows(T, F);
  const void* up_src = nullptr;
  const void* down_dst = nullptr;
  for (int64_t t = 0; t < T; ++t) {
    SCOPED_TRACE(::testing::Message() << "step " << t);
    be.n = Counts();
    auto p = (*m)->Step(state->get(), absl::MakeConstSpan(rows.data() + t * F, F));
    ASSERT_TRUE(p.ok()) << p.status();
    const bool grows = t == 16 || t == 32;
    // Growth: every layer's K and V and the decode workspace, once; the copies of the
    // valid rows into them, and the wait before the old buffers are freed.
    EXPECT_EQ(be.n.allocations, grows ? 2 * L + 1 : 0);
    EXPECT_EQ(be.n.syncs, grows ? 2 : 1);
    EXPECT_EQ(be.n.host_stagings, 0);
    // Only growth's copies of the valid rows (kv_cache_write puts the new rows in).
    EXPECT_EQ(be.n.blocking_copies, grows ? 2 * L : 0);
    EXPECT_EQ(be.n.decodes, L);
    EXPECT_EQ(be.n.decodes_with_work, L);
    EXPECT_EQ(be.n.decodes_with_length, L);
    // Two async copies, the row (and position) up and the probabilities down, both through the
    // state's staging: the same host block every step, never the caller's row or the
    // returned vector.
    ASSERT_EQ(be.n.async_src.size(), 2u);
    if (t == 0) up_src = be.n.async_src[0], down_dst = be.n.async_dst[1];
    EXPECT_EQ(be.n.async_src[0], up_src);
    EXPECT_EQ(be.n.async_dst[1], down_dst);
    EXPECT_NE(be.n.async_src[0], rows.data() + t * F);
    EXPECT_NE(be.n.async_dst[1], p->data());
  }
}

TEST(DecodeStepTransfers, CountedStepsEqualThePlainCpuBackend) {
  CountingBackend counted;
  cpu::CpuBackend plain{BackendOptions{}};
  auto a = Transformer::InitRandom(Config(), 5, &counted);
  auto b = Transformer::InitRandom(Config(), 5, &plain);
  ASSERT_TRUE(a.ok() && b.ok());
  auto sa = DecodeState::Create(**a, 8);
  auto sb = DecodeState::Create(**b, 8);
  ASSERT_TRUE(sa.ok() && sb.ok());
  const int64_t F = (*a)->config().features, T = 30;
  const std::vector<float> rows = Rows(T, F);
  for (int64_t t = 0; t < T; ++t) {
    auto pa = (*a)->Step(sa->get(), absl::MakeConstSpan(rows.data() + t * F, F));
    auto pb = (*b)->Step(sb->get(), absl::MakeConstSpan(rows.data() + t * F, F));
    ASSERT_TRUE(pa.ok() && pb.ok());
    ASSERT_EQ(pa->size(), pb->size());
    EXPECT_EQ(std::memcmp(pa->data(), pb->data(), pa->size() * sizeof(float)), 0) << "step " << t;
  }
}

TEST(DecodeStepTransfers, DecodeTakesThreeToFiveInputs) {
  EXPECT_TRUE(CheckAttentionArity(Op::kAttentionDecode, 3, 1).ok());
  EXPECT_TRUE(CheckAttentionArity(Op::kAttentionDecode, 4, 1).ok());
  EXPECT_TRUE(CheckAttentionArity(Op::kAttentionDecode, 5, 1).ok());
  EXPECT_FALSE(CheckAttentionArity(Op::kAttentionDecode, 6, 1).ok());
  EXPECT_FALSE(CheckAttentionArity(Op::kAttentionDecode, 2, 1).ok());
  EXPECT_EQ(AttentionDecodeWorkFloats(1, 4, 1, 64), 4 * 66);
  EXPECT_EQ(AttentionDecodeWorkFloats(1, 4, 256, 64), 4 * 66);
  EXPECT_EQ(AttentionDecodeWorkFloats(1, 4, 257, 64), 2 * 4 * 66);
}

}  // namespace
}  // namespace flashtick
