// Peak memory of a training step on the CPU backend (whose allocator counts every byte
// the Backend hands out, as the CUDA one does), bounded by a formula in the shapes, so
// a change that keeps activations or adjoints alive longer than the graph's memory plan
// allows (trainer/memory_plan.h) fails here. Also prints the breakdown.
//
// Notation: s bytes per element (fp32 here), M = B·T rows, C width, R = mlp_ratio·C,
// Q = (H + 2·Hkv)·D the fused qkv width, L layers, P parameters (the flat layout).
// Parameter-sized buffers (all fp32 here: compute dtype = master dtype, so no copies):
//   AdamW, and Sophia-H's plain steps: values, grads, m, v (or h)      4·P·s
//   Sophia-H refresh steps: + probe v and product Hv (which then holds ĥ)  6·P·s
// Saved for the backward, per layer: h, qkv (q, k rotated in place), o, h1, u = fc1(b);
// a = ln1(h), b = ln2(h1), z = gelu(u) and ln_f's output are recomputed by the
// projection that reads them, proj and f die at their residual add. Plus the final h
// and the logits:
//   S = L·(3·C + Q + R) + C + classes              (columns of M rows)
// A refresh step's HVP also reads, in its backward-over-backward, the cotangents of
// a, qkv, o, proj, b, u, z, f and of the embedding, ln_f and the logits, handed over
// one by one to the HVP's own adjoints â:
//   K = L·(5·C + Q + 2·R) + 2·C + classes
// Bounds on the activation memory (plan arena + workspace scratch + inputs), s·M times:
//   plain step (AdamW; Sophia-H without refresh):  S + 4·R
//   Sophia-H refresh (one HVP):                    S + K + 6·R
// the slack being the adjoints of one block in flight (ĝ, â, an accumulation) and the
// workspace's scratch, the recomputed input among it (measured at C = 64: S + 3.3·R
// and S + K + 5.1·R).
// Before the memory plan every activation held its value, cot, ĝ and â (and a rotated
// copy of q, k) for the graph's life: L·(22·C + 4·R) columns, and L·(42·C + 8·R) for a
// graph that can compute HVPs (on every Sophia-H step), i.e. 4,864 and 9,472 here
// before scratch, against the bounds 2,371 and 5,062.
#include <cstdio>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "trainer/trainer.h"
#include "trainer/transformer_graph.h"
#include "tests/trainer/train_test_util.h"

namespace flashtick::train_test {
namespace {

ModelConfig BenchLikeConfig() {  // train_step_bench's shape, narrower and shorter
  ModelConfig c;
  c.name = "train-memory-test";
  c.features = 6;
  c.width = 64;
  c.layers = 2;
  c.heads = 4;
  c.kv_heads = 4;
  c.mlp_ratio = 4;
  c.classes = 3;
  c.max_context = 512;
  return c;
}

struct Shape {
  int64_t s, M, C, R, Q, L, P, classes;
  int64_t Saved() const { return L * (3 * C + Q + R) + C + classes; }
  int64_t Cots() const { return L * (5 * C + Q + 2 * R) + 2 * C + classes; }
};

Shape ShapeOf(const ModelConfig& c, const Trainer& t, int64_t B, int64_t T) {
  const int64_t C = c.width, D = c.head_dim();
  return Shape{4, B * T, C, int64_t(c.mlp_ratio) * C, (c.heads + 2 * c.kv_heads) * D, c.layers,
               const_cast<Trainer&>(t).params().layout().total(), c.classes};
}

TEST(TrainMemory, StepPeakStaysWithinTheShapeBound) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const ModelConfig c = BenchLikeConfig();
  const int64_t B = 2, T = 200;
  const Batch batch = MakeBatch(B, T, c.features, 5);
  for (OptimizerKind kind : {OptimizerKind::kAdamW, OptimizerKind::kSophiaH}) {
    TrainerOptions o = ShortRunOptions(kind, /*seed=*/4);
    o.dtype = DType::kF32;
    o.hessian_interval = 2;  // step 1 refreshes ĥ, step 2 does not
    const int64_t before = be->Memory().used_bytes;
    auto t = *Trainer::Create(c, o, be.get());
    const int64_t model = be->Memory().used_bytes - before;
    const Shape sh = ShapeOf(c, *t, B, T);
    const bool sophia = kind == OptimizerKind::kSophiaH;
    for (int step = 1; step <= 2; ++step) {
      auto st = t->TrainStep(batch.ticks, batch.labels, B, T);
      ASSERT_TRUE(st.ok()) << st.status();
      const bool refresh = st->hessian_refreshed;
      EXPECT_EQ(refresh, sophia && step == 1);
      const int64_t persistent = (refresh ? 6 : 4) * sh.P * sh.s;
      const int64_t cols =
          refresh ? sh.Saved() + sh.Cots() + 6 * sh.R : sh.Saved() + 4 * sh.R;
      const int64_t bound = persistent + 64 + sh.s * sh.M * cols;
      std::printf(
          "train_memory(%s, step %d%s, M=%ld C=%ld L=%ld P=%ld): model %ld B, peak %ld B "
          "(activations %.1f columns of M·s), bound %ld B\n",
          OptimizerKindName(kind), step, refresh ? ", Hessian refresh" : "", long(sh.M),
          long(sh.C), long(sh.L), long(sh.P), long(model), long(st->peak_memory_bytes),
          double(st->peak_memory_bytes - persistent) / double(sh.s * sh.M), long(bound));
      EXPECT_LE(st->peak_memory_bytes, bound) << OptimizerKindName(kind) << " step " << step;
    }
  }
}

// The arena of each plan and the workspace's other buffers (scratch, inputs, attention
// statistics) after a Forward, Backward and HVP, in columns of M·s: the breakdown the
// bounds above are made of.
TEST(TrainMemory, PlanBreakdown) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const ModelConfig c = BenchLikeConfig();
  const int64_t B = 2, T = 200, M = B * T, s = 4;
  const Batch batch = MakeBatch(B, T, c.features, 5);
  auto store = *ParamStore::Create(c, DType::kF32, be.get());
  ASSERT_TRUE(store->InitRandom(1).ok());
  auto graph = *TransformerGraph::Create(store.get(), B, T, /*hvp=*/true);
  for (GraphPlan plan : {GraphPlan::kGradient, GraphPlan::kOneHvp, GraphPlan::kHvp}) {
    ASSERT_TRUE(graph->UsePlan(plan).ok());
    ASSERT_TRUE(graph->SetBatch(batch.ticks, batch.labels, 1.0 / M).ok());
    ASSERT_TRUE(graph->Forward().ok());
    store->ResetGrads();
    ASSERT_TRUE(graph->Backward().ok());
    if (plan != GraphPlan::kGradient) {
      ASSERT_TRUE(graph->HessianVectorProduct().ok());
    }
    std::printf("train_memory_plan(%d): arena %.1f columns, workspace %.1f columns of M·s\n",
                static_cast<int>(plan), double(graph->arena_bytes()) / (M * s),
                double(graph->workspace().allocated_bytes()) / (M * s));
  }
  EXPECT_FALSE(graph->HessianVectorProduct().ok() && graph->plan() == GraphPlan::kOneHvp);
}

}  // namespace
}  // namespace flashtick::train_test
