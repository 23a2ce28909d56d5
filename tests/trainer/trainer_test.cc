// Trainer on the CPU (trainer/trainer.h): gradient accumulation gives the same
// loss and update for any micro-batch size; the reported gradient norm is the norm of
// the full-batch gradient; the learning-rate schedule; a NaN step changes nothing;
// bad batches are refused; an exported model loads into Transformer and predicts what
// the trainer's own forward computes.
#include "trainer/trainer.h"

#include <cstdio>
#include <filesystem>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "model/transformer.h"
#include "tests/trainer/train_test_util.h"

namespace flashtick::train_test {
namespace {

std::unique_ptr<Trainer> MakeTrainer(Backend* be, TrainerOptions o) {
  auto t = Trainer::Create(TinyConfig(), o, be);
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(*t);
}

TrainerOptions F64Options(OptimizerKind kind) {
  TrainerOptions o = ShortRunOptions(kind, /*seed=*/3);
  o.dtype = DType::kF64;
  return o;
}

TEST(Trainer, MicroBatchesGiveTheSameStep) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const Batch batch = MakeBatch(4, 10, TinyConfig().features, 42);
  for (OptimizerKind kind : {OptimizerKind::kAdamW, OptimizerKind::kSophiaH}) {
    std::vector<std::vector<double>> weights;
    std::vector<double> losses;
    for (int64_t micro : {0, 2, 1}) {
      TrainerOptions o = F64Options(kind);
      o.micro_batch = micro;
      auto t = MakeTrainer(be.get(), o);
      // AdamW: the loss after two updates. Sophia-H estimates ĥ on the last micro-batch
      // by design, so its updates depend on the split: only the first loss must agree.
      double loss = 0;
      for (int s = 0; s < 3; ++s) {  // Sophia-H refreshes ĥ at steps 1 and 3
        auto st = t->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
        ASSERT_TRUE(st.ok()) << st.status();
        if (s == 0 || kind == OptimizerKind::kAdamW) loss = st->loss;
      }
      losses.push_back(loss);
      weights.push_back(*t->params().ToHost(t->params().values()));
    }
    for (size_t i = 1; i < losses.size(); ++i) {
      EXPECT_NEAR(losses[i], losses[0], 1e-12) << OptimizerKindName(kind);
      if (kind == OptimizerKind::kAdamW) {
        EXPECT_LT(RelL2(weights[i], weights[0]), 1e-12);
      }
    }
  }
}

TEST(Trainer, GradNormAndScheduleAndRefresh) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const Batch batch = MakeBatch(2, 8, TinyConfig().features, 43);
  TrainerOptions o = F64Options(OptimizerKind::kSophiaH);
  o.hessian_interval = 3;
  auto t = MakeTrainer(be.get(), o);
  for (int64_t step = 1; step <= 5; ++step) {
    auto st = t->TrainStep(batch.ticks, batch.labels, batch.B, batch.T);
    ASSERT_TRUE(st.ok()) << st.status();
    const std::vector<double> g = *t->params().ToHost(t->params().grads());
    EXPECT_NEAR(st->grad_norm, Norm(g), 1e-12 * Norm(g));
    EXPECT_EQ(st->step, step);
    EXPECT_DOUBLE_EQ(st->lr, o.lr.At(step));
    EXPECT_EQ(st->hessian_refreshed, step == 1 || step == 4);
    EXPECT_EQ(st->tokens, 16);
    EXPECT_GT(st->peak_memory_bytes, 0);
  }
  LrSchedule s{1.0, 10, 110, 0.1};
  EXPECT_DOUBLE_EQ(s.At(1), 0.1);
  EXPECT_DOUBLE_EQ(s.At(10), 1.0);
  EXPECT_NEAR(s.At(60), 0.55, 1e-15);  // half-way down the cosine
  EXPECT_NEAR(s.At(110), 0.1, 1e-15);
  EXPECT_DOUBLE_EQ(s.At(1000), 0.1);
}

TEST(Trainer, NonFiniteStepChangesNothingAndBadBatchesAreRefused) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  Batch batch = MakeBatch(2, 6, TinyConfig().features, 44);
  auto t = MakeTrainer(be.get(), F64Options(OptimizerKind::kAdamW));
  const std::vector<double> before = *t->params().ToHost(t->params().values());
  Batch nan = batch;
  nan.ticks[5] = std::nanf("");
  auto st = t->TrainStep(nan.ticks, nan.labels, nan.B, nan.T);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("not finite"), std::string::npos) << st.status();
  EXPECT_EQ(t->step(), 0);
  EXPECT_EQ(*t->params().ToHost(t->params().values()), before);
  Batch bad = batch;
  bad.labels[3] = 3;
  EXPECT_EQ(t->TrainStep(bad.ticks, bad.labels, bad.B, bad.T).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::fill(bad.labels.begin(), bad.labels.end(), -1);
  EXPECT_FALSE(t->TrainStep(bad.ticks, bad.labels, bad.B, bad.T).ok());
  EXPECT_FALSE(t->TrainStep(batch.ticks, batch.labels, batch.B, batch.T + 1).ok());
  TrainerOptions o = F64Options(OptimizerKind::kAdamW);
  o.micro_batch = 3;  // does not divide B = 2
  auto t3 = MakeTrainer(be.get(), o);
  EXPECT_FALSE(t3->TrainStep(batch.ticks, batch.labels, batch.B, batch.T).ok());
  EXPECT_TRUE(t->TrainStep(batch.ticks, batch.labels, batch.B, batch.T).ok());
}

TEST(Trainer, ExportedModelPredictsLikeTheTrainer) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const Batch batch = MakeBatch(2, 7, TinyConfig().features, 45);
  TrainerOptions o = F64Options(OptimizerKind::kAdamW);
  o.dtype = DType::kF32;
  auto t = MakeTrainer(be.get(), o);
  for (int s = 0; s < 3; ++s) ASSERT_TRUE(t->TrainStep(batch.ticks, batch.labels, 2, 7).ok());
  const std::string dir = ::testing::TempDir() + "/train_export_" + std::to_string(getpid());
  ASSERT_TRUE(t->ExportModel(dir).ok());
  auto model = Transformer::Load(dir, be.get());
  ASSERT_TRUE(model.ok()) << model.status();
  auto probs = (*model)->Predict(batch.ticks, 2, 7, false);
  ASSERT_TRUE(probs.ok()) << probs.status();
  // Mean CE from the exported model's probabilities = the trainer's loss.
  double ce = 0;
  int n = 0;
  for (int64_t m = 0; m < 14; ++m) {
    if (batch.labels[m] < 0) continue;
    ce -= std::log((*probs)[m * 3 + batch.labels[m]]);
    ++n;
  }
  auto loss = t->EvalLoss(batch.ticks, batch.labels, 2, 7);
  ASSERT_TRUE(loss.ok());
  EXPECT_NEAR(ce / n, *loss, 1e-5);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace flashtick::train_test
