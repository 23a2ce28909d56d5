// Captured decode steps (DecodeOptions::capture, model/transformer_step.cc) seen from the
// backend: after a capacity's first step, a step runs no op of its own and replays the
// capture once; the capture is made again when the cache grows; a backend without
// capture, or one whose capture fails, runs the step op by op with the same
// probabilities, and the failure is kept in capture_error(). The backend here forwards
// to the CPU reference, whose capture records closures.
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "model/decode_state.h"
#include "model/transformer.h"
#include "tests/model/forwarding_backend.h"
#include "tests/model/small_decode_model.h"

namespace flashtick {
namespace {

// Counts runs, captures and replays; can refuse captures (busy, or failing at the end).
class CaptureBackend final : public testing::ForwardingCpuBackend {
 public:
  explicit CaptureBackend(bool capture, bool fail_end_capture = false)
      : capture_(capture), fail_end_(fail_end_capture) {}
  absl::Status Run(const OpDesc& d, absl::Span<const TensorView> in,
                   absl::Span<const TensorView> out) override {
    ++runs;
    return cpu_.Run(d, in, out);
  }
  bool SupportsCapture() const override { return capture_; }
  absl::Status BeginCapture() override {
    ++captures_begun;
    if (busy_begins > 0) {  // another model's capture is open on this backend
      --busy_begins;
      return absl::FailedPreconditionError("test: a capture is already open");
    }
    return cpu_.BeginCapture();
  }
  absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() override {
    auto work = cpu_.EndCapture();
    if (fail_end_) return absl::InternalError("test: this backend's capture always fails");
    return work;
  }
  absl::Status Replay(const CapturedWork& work) override {
    ++replays;
    return cpu_.Replay(work);
  }

  int runs = 0, captures_begun = 0, replays = 0;
  int busy_begins = 0;  // BeginCapture answers "busy" this many more times

 private:
  bool capture_, fail_end_;
};

ModelConfig Config() { return testing::SmallDecodeConfig(); }
std::vector<float> Rows(int64_t T, int64_t F) { return testing::RandomRows(T, F, 17); }

// The same random model (seed) on a backend without capture (a) and on the backend under
// test (b), each with a decode state of initial capacity 8 that asks for capture (a's
// backend cannot: its state runs op by op).
struct Twins {
  std::unique_ptr<Transformer> a, b;
  std::unique_ptr<DecodeState> sa, sb;
};

void MakeTwins(CaptureBackend* plain, CaptureBackend* tested, uint64_t seed, Twins* out) {
  auto a = Transformer::InitRandom(Config(), seed, plain);
  auto b = Transformer::InitRandom(Config(), seed, tested);
  ASSERT_TRUE(a.ok() && b.ok());
  out->a = std::move(*a);
  out->b = std::move(*b);
  DecodeOptions opt;
  opt.capture = true;
  auto sa = DecodeState::Create(*out->a, 8, opt);
  auto sb = DecodeState::Create(*out->b, 8, opt);
  ASSERT_TRUE(sa.ok() && sb.ok());
  out->sa = std::move(*sa);
  out->sb = std::move(*sb);
}

// Steps the same T rows through both states and expects the same probabilities bit for
// bit at every step.
void ExpectSameSteps(Twins& w, int64_t T) {
  const int64_t F = w.a->config().features;
  const std::vector<float> rows = Rows(T, F);
  for (int64_t t = 0; t < T; ++t) {
    auto pa = w.a->Step(w.sa.get(), absl::MakeConstSpan(rows.data() + t * F, F));
    auto pb = w.b->Step(w.sb.get(), absl::MakeConstSpan(rows.data() + t * F, F));
    ASSERT_TRUE(pa.ok()) << pa.status();
    ASSERT_TRUE(pb.ok()) << pb.status();
    ASSERT_EQ(pa->size(), pb->size());
    EXPECT_EQ(std::memcmp(pa->data(), pb->data(), pa->size() * sizeof(float)), 0) << "step " << t;
  }
}

TEST(DecodeCapture, AStepAfterTheFirstReplaysOnceAndRunsNoOp) {
  CaptureBackend be(/*capture=*/true);
  auto m = Transformer::InitRandom(Config(), 9, &be);
  ASSERT_TRUE(m.ok()) << m.status();
  const int64_t F = (*m)->config().features, T = 40;  // capacities 8, 16, 32, 64
  const std::vector<float> rows = Rows(T, F);
  DecodeOptions opt;
  opt.capture = true;
  auto state = DecodeState::Create(**m, 8, opt);
  ASSERT_TRUE(state.ok()) << state.status();
  for (int64_t t = 0; t < T; ++t) {
    SCOPED_TRACE(::testing::Message() << "step " << t);
    be.runs = be.captures_begun = be.replays = 0;
    auto p = (*m)->Step(state->get(), absl::MakeConstSpan(rows.data() + t * F, F));
    ASSERT_TRUE(p.ok()) << p.status();
    const bool new_capacity = t == 0 || t == 8 || t == 16 || t == 32;
    EXPECT_EQ(be.captures_begun, new_capacity ? 1 : 0);
    EXPECT_EQ(be.replays, 1);
    // Ops are recorded (through Run) only while capturing; a replay runs none of its own.
    if (new_capacity)
      EXPECT_GT(be.runs, 0);
    else
      EXPECT_EQ(be.runs, 0);
  }
  EXPECT_EQ((*state)->captures(), 4);
  EXPECT_TRUE((*state)->capture_error().ok());
}

TEST(DecodeCapture, CapturedStepsEqualStepsRunOpByOp) {
  CaptureBackend plain(/*capture=*/false), captured(/*capture=*/true);
  Twins w;
  ASSERT_NO_FATAL_FAILURE(MakeTwins(&plain, &captured, 5, &w));
  EXPECT_FALSE(w.sa->capturing());  // asked for capture; its backend has none
  EXPECT_TRUE(w.sb->capturing());
  const int64_t T = 70;
  ExpectSameSteps(w, T);
  EXPECT_EQ(plain.replays, 0);
  EXPECT_EQ(captured.replays, T);
}

TEST(DecodeCapture, AFailedCaptureFallsBackToOpByOp) {
  CaptureBackend plain(/*capture=*/false), failing(/*capture=*/true, /*fail_end_capture=*/true);
  Twins w;
  ASSERT_NO_FATAL_FAILURE(MakeTwins(&plain, &failing, 6, &w));
  ExpectSameSteps(w, 20);
  EXPECT_FALSE(w.sb->capturing());
  EXPECT_EQ(w.sb->captures(), 0);
  EXPECT_EQ(failing.captures_begun, 1);  // tried once, then off for the state
  EXPECT_EQ(failing.replays, 0);
  EXPECT_NE(w.sb->capture_error().message().find("always fails"), std::string::npos)
      << w.sb->capture_error();
}

// A backend busy with another capture is no failure: those steps run op by op, and the
// state captures once the backend is free.
TEST(DecodeCapture, ABusyBackendDefersTheCapture) {
  CaptureBackend plain(/*capture=*/false), busy(/*capture=*/true);
  busy.busy_begins = 3;
  Twins w;
  ASSERT_NO_FATAL_FAILURE(MakeTwins(&plain, &busy, 8, &w));
  const int64_t T = 6;
  ExpectSameSteps(w, T);
  EXPECT_TRUE(w.sb->capturing());
  EXPECT_TRUE(w.sb->capture_error().ok());
  EXPECT_EQ(w.sb->captures(), 1);      // made at step 3, once the backend was free
  EXPECT_EQ(busy.captures_begun, 4);    // three busy answers, then the capture
  EXPECT_EQ(busy.replays, T - 3);       // steps 3, 4, 5
}

// While a capture is open the CPU backend refuses what would wait (as CUDA's stream
// capture does), and records Run instead of running it.
TEST(DecodeCapture, CpuCaptureRecordsAndRefusesWaits) {
  cpu::CpuBackend be{BackendOptions{}};
  std::vector<float> x{1, 2, 3, 4}, y(4, 0.0f);
  ASSERT_TRUE(be.BeginCapture().ok());
  EXPECT_EQ(be.BeginCapture().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(be.Synchronize().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(be.Copy(y.data(), DeviceKind::kCpu, x.data(), DeviceKind::kCpu, 16).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(be.CopyAsync(y.data(), DeviceKind::kCpu, x.data(), DeviceKind::kCpu, 16).ok());
  EXPECT_EQ(y[0], 0.0f);  // recorded, not run
  auto work = be.EndCapture();
  ASSERT_TRUE(work.ok()) << work.status();
  ASSERT_TRUE(be.Replay(**work).ok());
  EXPECT_EQ(y[3], 4.0f);
  x[3] = 9.0f;  // a replay reads the buffers as they are now
  ASSERT_TRUE(be.Replay(**work).ok());
  EXPECT_EQ(y[3], 9.0f);
  EXPECT_EQ(be.EndCapture().status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace flashtick
