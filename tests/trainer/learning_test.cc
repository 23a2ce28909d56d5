// Short training runs on the CPU (fp32) on a learnable synthetic task: the label of
// step t is the sign class of an exponentially weighted sum of past log returns
// (train_test_util.h MakeBatch), which a causal transformer can read from its context.
// AdamW and Sophia-H must each cut the held-out loss well below its starting value
// (≈ ln 3 = 1.10 for an untrained model) and the chance level of the class mix.
#include <cstdio>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "trainer/trainer.h"
#include "tests/trainer/train_test_util.h"

namespace flashtick::train_test {
namespace {

struct Curve {
  double initial = 0, final = 0;
};

Curve Train(OptimizerKind kind, double lr, int steps) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  ModelConfig c = TinyConfig();
  c.width = 16;
  c.heads = 2;
  c.kv_heads = 2;
  TrainerOptions o;
  o.optimizer = kind;
  o.hyper = OptimizerHyper::Defaults(kind);
  o.lr = LrSchedule{lr, 10, steps, 0.1};
  o.hessian_interval = 5;
  o.seed = 1;
  auto t = *Trainer::Create(c, o, be.get());
  const Batch held_out = MakeBatch(16, 48, c.features, 999);
  Curve curve;
  curve.initial = *t->EvalLoss(held_out.ticks, held_out.labels, 16, 48);
  for (int s = 0; s < steps; ++s) {
    const Batch b = MakeBatch(8, 48, c.features, 1000 + s);
    auto st = t->TrainStep(b.ticks, b.labels, 8, 48);
    EXPECT_TRUE(st.ok()) << st.status();
    if (!st.ok()) break;
    if ((s + 1) % 40 == 0)
      std::printf("%s step %d: train loss %.4f grad norm %.3f lr %.2e\n", OptimizerKindName(kind),
                  s + 1, st->loss, st->grad_norm, st->lr);
  }
  curve.final = *t->EvalLoss(held_out.ticks, held_out.labels, 16, 48);
  std::printf("%s: held-out loss %.4f -> %.4f after %d steps\n", OptimizerKindName(kind),
              curve.initial, curve.final, steps);
  return curve;
}

// Cross-entropy of always predicting the held-out class frequencies: what a model
// that ignores the ticks can reach.
double ChanceLoss() {
  const Batch b = MakeBatch(16, 48, TinyConfig().features, 999);
  double n[3] = {0, 0, 0}, total = 0;
  for (int32_t y : b.labels)
    if (y >= 0) n[y] += 1, total += 1;
  double h = 0;
  for (double k : n)
    if (k > 0) h -= k / total * std::log(k / total);
  return h;
}

TEST(Learning, AdamWAndSophiaHLearnTheSyntheticTask) {
  const double chance = ChanceLoss();
  std::printf("chance (class-frequency) loss %.4f\n", chance);
  const Curve adam = Train(OptimizerKind::kAdamW, 1e-2, 200);
  const Curve sophia = Train(OptimizerKind::kSophiaH, 5e-3, 200);
  for (const Curve& c : {adam, sophia}) {
    EXPECT_NEAR(c.initial, std::log(3.0), 0.1);
    EXPECT_LT(c.final, 0.3 * chance);  // measured: AdamW 0.093, Sophia-H 0.094
  }
}

}  // namespace
}  // namespace flashtick::train_test
