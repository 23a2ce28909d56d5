// The training engine on CUDA (bf16 compute, fp32 masters) against the CPU in f64 on the
// same weights and batch: loss, gradient and Hessian-vector product of a two-layer GQA
// model with head dim 64 and T = 200 (not a multiple of any tile), and a 20-step AdamW
// and Sophia-H run whose loss curve follows the CPU's (fp32); per-node step timing with
// CUDA event marks. Skips with a message when no GPU is present. Bounds are bf16-level
// (about 2^-8 relative per rounding, through two layers): stated here, to be tightened
// from the printed figures.
#include <cstdio>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "trainer/param_store.h"
#include "trainer/step_profiler.h"
#include "trainer/trainer.h"
#include "trainer/transformer_graph.h"
#include "tests/trainer/train_test_util.h"

namespace flashtick::train_test {
namespace {

ModelConfig CudaConfig() {
  ModelConfig c = TinyConfig();
  c.width = 128;
  c.heads = 2;
  c.kv_heads = 1;  // D = 64, GQA
  c.max_context = 4096;
  return c;
}

struct Result {
  double loss = 0;
  std::vector<double> grad, hv;
};

Result RunModel(Backend* be, DType master, DType compute, const Batch& b,
                const std::vector<double>& v) {
  Result r;
  auto store = *ParamStore::Create(CudaConfig(), master, compute, be);
  EXPECT_TRUE(store->InitRandom(4).ok());
  auto graph = TransformerGraph::Create(store.get(), b.B, b.T, /*hvp=*/true);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return r;
  int labelled = 0;
  for (int32_t y : b.labels) labelled += y >= 0;
  EXPECT_TRUE((*graph)->SetBatch(b.ticks, b.labels, 1.0 / labelled).ok());
  auto loss = (*graph)->Forward();
  EXPECT_TRUE(loss.ok()) << loss.status();
  r.loss = loss.ok() ? *loss : 0;
  store->ResetGrads();
  absl::Status s = (*graph)->Backward();
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(store->CompleteGrads().ok());
  r.grad = *store->ToHost(store->grads());
  EXPECT_TRUE(store->FromHost(store->probe(), v).ok());
  s = (*graph)->HessianVectorProduct();
  EXPECT_TRUE(s.ok()) << s;
  r.hv = *store->ToHost(store->hv());
  return r;
}

TEST(TrainCuda, GradientAndHvpMatchCpuFloat64) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA GPU visible: the CUDA training test needs one";
  auto cpu = *CreateBackend("cpu", BackendOptions{2, 0});
  auto cuda = CreateBackend("cuda");
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  const Batch b = MakeBatch(2, 200, CudaConfig().features, 12);
  auto layout = *ParamLayout::ForConfig(CudaConfig());
  TrainRng rng(5);
  std::vector<double> v(layout.total(), 0.0);
  for (const FlatParam& p : layout.params())
    for (int64_t j = 0; j < p.numel; ++j) v[p.offset + j] = rng.Rademacher();
  const Result ref = RunModel(cpu.get(), DType::kF64, DType::kF64, b, v);
  const Result got = RunModel(cuda->get(), DType::kF32, DType::kBF16, b, v);
  const double el = std::fabs(got.loss - ref.loss) / ref.loss;
  const double eg = RelL2(got.grad, ref.grad), eh = RelL2(got.hv, ref.hv);
  std::printf("train_cuda_bf16_vs_cpu_f64(B=2,T=200,D=64,GQA): loss %.2e grad %.2e hvp %.2e\n", el,
              eg, eh);
  EXPECT_LT(el, 1e-2);
  EXPECT_LT(eg, 5e-2);
  EXPECT_LT(eh, 1e-1);
}

TEST(TrainCuda, LossCurveFollowsCpu) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA GPU visible: the CUDA training test needs one";
  auto cpu = *CreateBackend("cpu", BackendOptions{2, 0});
  auto cuda = *CreateBackend("cuda");
  for (OptimizerKind kind : {OptimizerKind::kAdamW, OptimizerKind::kSophiaH}) {
    TrainerOptions o;
    o.optimizer = kind;
    o.hyper = OptimizerHyper::Defaults(kind);
    // lr 1e-3 for both: at AdamW's 3e-3 this tiny model's loss jumps by ±0.1 a step and
    // the run is chaotic, so no bf16 run can follow an fp32 one. Measured on the CPU in
    // fp32 alone (the same 20 steps, the second run's initial weights once rounded to
    // bf16): worst loss gap 7.8e-2 at lr 3e-3 (the H200 showed 0.14 here), 4.0e-4 at
    // 1e-3 for AdamW and 1.8e-2 for Sophia-H.
    o.lr = LrSchedule{1e-3, 3, 20, 0.1};
    o.hessian_interval = 5;
    auto tc = *Trainer::Create(CudaConfig(), o, cpu.get());
    auto tg = *Trainer::Create(CudaConfig(), o, cuda.get());
    double worst = 0;
    for (int s = 0; s < 20; ++s) {
      const Batch b = MakeBatch(2, 128, CudaConfig().features, 500 + s);
      auto a = tc->TrainStep(b.ticks, b.labels, 2, 128);
      auto g = tg->TrainStep(b.ticks, b.labels, 2, 128);
      ASSERT_TRUE(a.ok()) << a.status();
      ASSERT_TRUE(g.ok()) << g.status();
      worst = std::max(worst, std::fabs(a->loss - g->loss));
    }
    std::printf("train_cuda_loss_curve_%s: worst |loss_cuda − loss_cpu| over 20 steps %.3e\n",
                OptimizerKindName(kind), worst);
    EXPECT_LT(worst, 0.05);
  }
}

// Per-node timing on the GPU: CUDA event marks tile the step (shares sum to 1), every
// sweep has one segment per node, and the marks' pool is reused from step to step.
TEST(TrainCuda, ProfiledStepsTileTheStep) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA GPU visible: the CUDA training test needs one";
  auto cuda = *CreateBackend("cuda");
  cuda->ResetMarks();
  auto m0 = cuda->RecordMark(), m1 = cuda->RecordMark();
  ASSERT_TRUE(m0.ok() && m1.ok()) << m0.status() << m1.status();
  ASSERT_TRUE(cuda->Synchronize().ok());
  auto ms = cuda->MarkElapsedMs(*m0, *m1);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GE(*ms, 0.0);
  EXPECT_FALSE(cuda->MarkElapsedMs(0, 5).ok());
  cuda->ResetMarks();
  EXPECT_EQ(*cuda->RecordMark(), 0);

  TrainerOptions o;
  o.optimizer = OptimizerKind::kSophiaH;
  o.hyper = OptimizerHyper::Defaults(o.optimizer);
  o.hessian_interval = 2;
  auto t = *Trainer::Create(CudaConfig(), o, cuda.get());
  StepProfiler prof(cuda.get());
  t->set_profiler(&prof);
  const Batch b = MakeBatch(2, 128, CudaConfig().features, 77);
  for (int s = 0; s < 4; ++s) {  // refresh, plain, refresh, plain
    auto st = t->TrainStep(b.ticks, b.labels, 2, 128);
    ASSERT_TRUE(st.ok()) << st.status();
    const StepProfile& p = prof.last();
    double share = 0;
    int64_t attention_nodes = 0;
    for (const ProfileRow& r : p.rows) {
      EXPECT_GE(r.ms, 0.0) << r.phase << "/" << r.kind;
      share += r.share;
      if (r.kind == "attention") attention_nodes += r.count;
    }
    EXPECT_NEAR(share, 1.0, 1e-9);
    EXPECT_LE(p.total_ms, st->step_seconds * 1e3 + 1e-3);
    EXPECT_EQ(attention_nodes, (st->hessian_refreshed ? 4 : 2) * CudaConfig().layers);
    std::printf("train_cuda_profile step %d (%s): %.3f ms of %.3f ms in marks\n%s", s + 1,
                st->hessian_refreshed ? "refresh" : "plain", p.total_ms, st->step_seconds * 1e3,
                p.ByPhase().Table().c_str());
  }
}

}  // namespace
}  // namespace flashtick::train_test
