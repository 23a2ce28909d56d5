// Per-node timing of the training step on the CPU (trainer/step_profiler.h): the
// backend's marks, the report's shares (they tile the step, so they sum to 1), per-kind
// segment counts equal to the graph's node counts in every sweep, and a profiled run
// whose losses and weights are bit-identical to an unprofiled one.
#include "trainer/step_profiler.h"

#include <map>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "tests/trainer/train_test_util.h"
#include "trainer/trainer.h"

namespace flashtick::train_test {
namespace {

// TinyConfig's nodes per kind: embed, 2 layers × [ln1 qkv attn proj res ln2 fc1 gelu fc2
// res], ln_f, head, loss.
std::map<std::string, int64_t> TinyNodeKinds(int layers) {
  return {{"linear", 2 + 4 * layers}, {"layernorm", 1 + 2 * layers}, {"attention", layers},
          {"residual", 2 * layers},   {"gelu", layers},                {"cross_entropy", 1}};
}

int64_t Count(const StepProfile& p, const std::string& phase, const std::string& kind) {
  for (const ProfileRow& r : p.rows)
    if (r.phase == phase && r.kind == kind) return r.count;
  return 0;
}

double ShareSum(const StepProfile& p) {
  double s = 0;
  for (const ProfileRow& r : p.rows) s += r.share;
  return s;
}

TEST(StepProfiler, CpuMarksAreTheHostClock) {
  auto be = *CreateBackend("cpu", BackendOptions{1, 0});
  be->ResetMarks();
  auto a = be->RecordMark(), b = be->RecordMark();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, 0);
  EXPECT_EQ(*b, 1);
  auto ms = be->MarkElapsedMs(*a, *b);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GE(*ms, 0.0);
  EXPECT_FALSE(be->MarkElapsedMs(0, 2).ok());
  be->ResetMarks();
  EXPECT_EQ(*be->RecordMark(), 0);  // a new round reuses the indices
}

TEST(StepProfiler, MarksOutsideAStepAreIgnoredAndSegmentsTile) {
  auto be = *CreateBackend("cpu", BackendOptions{1, 0});
  StepProfiler prof(be.get());
  ASSERT_TRUE(prof.Mark("host", "before").ok());  // not begun: nothing recorded
  prof.Begin();
  ASSERT_TRUE(prof.Mark("forward", "linear").ok());
  ASSERT_TRUE(prof.Mark("forward", "gelu").ok());
  ASSERT_TRUE(prof.Mark("forward", "linear").ok());
  auto p = prof.End();
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(prof.active());
  EXPECT_EQ(p->steps, 1);
  EXPECT_EQ(p->rows.size(), 2u);
  EXPECT_EQ(Count(*p, "forward", "linear"), 2);
  EXPECT_EQ(Count(*p, "forward", "gelu"), 1);
  EXPECT_EQ(Count(*p, "host", "before"), 0);
  EXPECT_NEAR(ShareSum(*p), 1.0, 1e-9);
  EXPECT_FALSE(prof.End().ok());  // End without Begin

  StepProfile sum = *p;
  sum.Add(*p);
  EXPECT_EQ(sum.steps, 2);
  EXPECT_EQ(Count(sum, "forward", "linear"), 4);
  EXPECT_DOUBLE_EQ(sum.total_ms, 2 * p->total_ms);
  const StepProfile phases = sum.ByPhase();
  ASSERT_EQ(phases.rows.size(), 1u);
  EXPECT_EQ(phases.rows[0].count, 6);
  EXPECT_FALSE(sum.Table().empty());
}

// One plain and one refresh step of Sophia-H (k = 2), with `micro` micro-batches: every
// node shows up once per forward and backward of each micro-batch, and once per sweep
// of the HVP (which runs on the last micro-batch only).
void CheckCounts(int64_t micro_batch, int64_t micros) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  TrainerOptions o = ShortRunOptions(OptimizerKind::kSophiaH, 5);
  o.micro_batch = micro_batch;
  auto t = *Trainer::Create(TinyConfig(), o, be.get());
  StepProfiler prof(be.get());
  t->set_profiler(&prof);
  const Batch batch = MakeBatch(4, 10, TinyConfig().features, 7);
  for (bool refresh : {true, false}) {  // step 1 refreshes ĥ, step 2 does not
    auto st = t->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
    ASSERT_TRUE(st.ok()) << st.status();
    ASSERT_EQ(st->hessian_refreshed, refresh);
    const StepProfile& p = prof.last();
    SCOPED_TRACE(refresh ? "refresh step" : "plain step");
    EXPECT_EQ(p.steps, 1);
    EXPECT_NEAR(ShareSum(p), 1.0, 1e-9);
    EXPECT_GT(p.total_ms, 0.0);
    EXPECT_LE(p.total_ms, st->step_seconds * 1e3 + 1e-6);
    int64_t nodes = 0;
    for (const auto& [kind, n] : TinyNodeKinds(TinyConfig().layers)) {
      EXPECT_EQ(Count(p, "forward", kind), micros * n) << kind;
      EXPECT_EQ(Count(p, "backward", kind), micros * n) << kind;
      EXPECT_EQ(Count(p, "hvp_bwd_bwd", kind), refresh ? n : 0) << kind;
      EXPECT_EQ(Count(p, "hvp_backward", kind), refresh ? n : 0) << kind;
      nodes += n;
    }
    EXPECT_EQ(nodes, 24);
    EXPECT_EQ(Count(p, "host", "set_batch"), micros);
    EXPECT_EQ(Count(p, "host", "loss_readback"), micros);
    EXPECT_EQ(Count(p, "hutchinson", "probe"), refresh ? 1 : 0);
    EXPECT_EQ(Count(p, "hutchinson", "probe_product"), refresh ? 1 : 0);
    EXPECT_EQ(Count(p, "optimizer", "update"), 1);
    EXPECT_EQ(Count(p, "optimizer", "grad_norm"), 1);
  }
}

TEST(StepProfiler, CountsMatchTheGraphsNodes) { CheckCounts(0, 1); }
TEST(StepProfiler, CountsMatchTheGraphsNodesPerMicroBatch) { CheckCounts(2, 2); }

TEST(StepProfiler, ProfilingChangesNoNumber) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const Batch batch = MakeBatch(2, 12, TinyConfig().features, 11);
  for (OptimizerKind kind : {OptimizerKind::kSophiaH, OptimizerKind::kAdamW}) {
    std::vector<std::vector<double>> losses(2), weights(2);
    for (int profiled : {0, 1}) {
      auto t = *Trainer::Create(TinyConfig(), ShortRunOptions(kind, 9), be.get());
      StepProfiler prof(be.get());
      if (profiled) t->set_profiler(&prof);
      for (int s = 0; s < 5; ++s) {  // Sophia-H refreshes at steps 1, 3, 5
        auto st = t->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
        ASSERT_TRUE(st.ok()) << st.status();
        losses[profiled].push_back(st->loss);
        auto ev = t->EvalLoss(batch.ticks, batch.labels, batch.B, batch.T);  // between steps
        ASSERT_TRUE(ev.ok()) << ev.status();
        losses[profiled].push_back(*ev);
      }
      weights[profiled] = *t->params().ToHost(t->params().values());
      if (profiled) {
        EXPECT_EQ(prof.last().steps, 1);
      }
    }
    ASSERT_EQ(losses[0].size(), losses[1].size());
    for (size_t i = 0; i < losses[0].size(); ++i)
      EXPECT_EQ(losses[0][i], losses[1][i]) << OptimizerKindName(kind) << " loss " << i;
    EXPECT_EQ(weights[0], weights[1]) << OptimizerKindName(kind);
  }
}

}  // namespace
}  // namespace flashtick::train_test
