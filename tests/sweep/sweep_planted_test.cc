// The sweep end to end on the CPU with a small trained model (the `demo` preset,
// the README's sweep and the CPU twin of the GPU `planted` sweep): keyed-cue days with
// three lag families (research/synthetic/keyed_cue.h), arms N = 16, 32, 64. Each arm is
// trained walk-forward from scratch by the Trainer; nothing here is an oracle.
//   planted:   an arm calls the events of the lag families it can see (L ≤ N) and
//              not the others, so arm N=16 sees {10}, N=32 {10, 24}, N=64 all
//              three; the daily Sharpe ranks the arms by N and the longest arm
//              passes the gate (best out of sample, DSR ≥ 0.95, PBO ≤ 0.10).
//              Measured (1 thread): 0.80–0.95 on seen families, so the bar is 0.7
//              (800 events a family: a coin is 0.5 ± 0.053 at 3σ)
//   null twin: the move's sign is independent of the cue: every arm fails — the
//              verdict is FAIL and no arm's Deflated Sharpe (against all three
//              trials) reaches 0.95
// The figures are printed for the record (the protocol reports them: docs/research/protocol.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "research/stats/sharpe.h"
#include "research/sweep/fold_evaluator.h"
#include "research/sweep/sweep_engine.h"
#include "research/sweep/sweep_presets.h"

namespace flashtick {
namespace {

SweepOutcome RunPreset(const std::string& preset) {
  auto text = SweepPresetJson(preset);
  EXPECT_TRUE(text.ok());
  auto config = ParseSweepConfig(*text);
  EXPECT_TRUE(config.ok()) << config.status();
  SweepEngineOptions o;
  o.dir = ::testing::TempDir() + "/sweep_planted_" + preset + "_" + std::to_string(getpid());
  std::filesystem::remove_all(o.dir);
  o.device = "cpu";
  o.cpu_threads = 2;
  o.python = "";  // figures only; the service test draws the plots
  auto out = SweepEngine::Run(*config, o, {});
  EXPECT_TRUE(out.ok()) << out.status();
  std::filesystem::remove_all(o.dir);
  return out.ok() ? *std::move(out) : SweepOutcome{};
}

// Each arm's DSR against every arm's SR̂ (the trials of this sweep).
std::vector<double> ArmDsr(const SweepOutcome& o) {
  std::vector<double> trials, dsr;
  for (const ArmResult& a : o.arms) trials.push_back(a.Sharpe());
  for (const ArmResult& a : o.arms) {
    auto d = DeflatedSharpeRatio(a.daily_returns(), trials);
    dsr.push_back(d.ok() ? d->dsr : 0.0);
  }
  return dsr;
}

void Print(const char* what, const SweepOutcome& o) {
  const std::vector<double> dsr = ArmDsr(o);
  for (size_t i = 0; i < o.arms.size(); ++i) {
    const ArmResult& a = o.arms[i];
    auto m = a.Pooled();
    std::printf("%s %-5s acc %.4f macro-F1 %.4f log-loss %.4f daily Sharpe %+.3f DSR %.4f "
                "%.2f s/epoch %.0f tok/s peak %.1f MiB; call-step accuracy:",
                what, a.arm_id.c_str(), m.ok() ? m->accuracy : 0.0, m.ok() ? m->macro_f1 : 0.0,
                m.ok() ? m->log_loss : 0.0, a.Sharpe(), dsr[i], a.seconds_per_epoch(),
                a.tokens_per_second(), a.peak_memory_bytes / 1048576.0);
    for (const EventTally& t : a.events) {
      std::printf(" L=%lld %.3f (%lld/%lld)", static_cast<long long>(t.lag), t.rate(),
                  static_cast<long long>(t.hits), static_cast<long long>(t.events));
    }
    std::printf("\n");
  }
  if (o.verdict.has_value()) std::printf("%s verdict: %s\n", what, o.verdict->Summary().c_str());
  std::printf("%s wall-clock %.1f s\n", what, o.wall_seconds);
}

TEST(SweepPlanted, ArmsRankByTheLagFamiliesTheySeeAndTheLongestPasses) {
  const SweepOutcome o = RunPreset("demo");
  ASSERT_EQ(o.arms.size(), 3u);
  Print("planted", o);
  for (const ArmResult& a : o.arms) {
    ASSERT_EQ(a.events.size(), 3u);
    for (const EventTally& t : a.events) {
      ASSERT_GT(t.events, 0) << a.arm_id << " lag " << t.lag;
      if (t.lag <= a.context) {
        EXPECT_GE(t.rate(), 0.7) << a.arm_id << " should call lag " << t.lag;
        // Where the call step looks (fold_evaluator.h): the first 8 events of a family
        // it sees, per layer and head; a family it calls has a head that looks at the
        // cue well above uniform (measured: 5–40 × 1/N).
        ASSERT_EQ(t.attention_events, kAttentionEvents) << a.arm_id << " lag " << t.lag;
        constexpr size_t kLayersTimesHeads = 2 * 4;  // the demo preset's model
        ASSERT_EQ(t.cue_weight.size(), kLayersTimesHeads);
        ASSERT_EQ(t.self_weight.size(), t.cue_weight.size());
        double most = 0;
        for (size_t i = 0; i < t.cue_weight.size(); ++i) {
          EXPECT_GE(t.cue_weight[i], 0.0);
          EXPECT_LE(t.cue_weight[i] + t.self_weight[i], 1.0 + 1e-6);
          most = std::max(most, t.cue_weight[i]);
        }
        // Rollout onto the cue (attention_rollout.h): a share of the call step's output.
        EXPECT_GE(t.cue_rollout, 0.0);
        EXPECT_LE(t.cue_rollout, 1.0 + 1e-6);
        std::printf("%s lag %lld: most weight on the cue %.4f, rollout %.4f, 1/N %.4f\n",
                    a.arm_id.c_str(), static_cast<long long>(t.lag), most, t.cue_rollout,
                    1.0 / static_cast<double>(a.context));
        if (t.rate() >= 0.7) {
          EXPECT_GE(most, 3.0 / static_cast<double>(a.context))
              << a.arm_id << " calls lag " << t.lag << " without looking at its cue";
        }
        // Rollout keeps at least ½ of a step's flow a layer (the residual) and gives a
        // head's weight w on the cue 1/H of the head mean, so with the weight in either
        // layer the cue gets ≥ ½·½·w/H of the call step's flow — unless pruning drops it,
        // which cannot happen while ½·w/H is among the 16 largest shares of a layer
        // (w ≥ 0.25 with 4 heads; the floor of 1e-4 a step costs at most 16·1e-4).
        constexpr double kHeads = 4;
        if (most >= 0.25) {
          EXPECT_GE(t.cue_rollout, most / (4 * kHeads) - 16e-4)
              << a.arm_id << " lag " << t.lag << ": the rollout misses the cue's direct weight";
        }
      } else {
        // Its cue is outside every window of the arm: nothing to look at.
        EXPECT_EQ(t.attention_events, 0) << a.arm_id << " lag " << t.lag;
        // The go marker says that a move comes, not its sign: an arm that cannot
        // see the cue calls a coin (or says flat), so neither its hit rate nor the
        // sign accuracy of its calls rises above ½ by more than 3 binomial σ.
        const double bound = 0.5 + 3.0 * std::sqrt(0.25 / static_cast<double>(t.events));
        EXPECT_LE(t.rate(), bound) << a.arm_id << " cannot see lag " << t.lag;
        if (t.calls > 0) {
          const double sign = static_cast<double>(t.call_hits) / t.calls;
          EXPECT_LE(sign, 0.5 + 3.0 * std::sqrt(0.25 / static_cast<double>(t.calls)))
              << a.arm_id << " calls the sign of lag " << t.lag << " it cannot see";
        }
      }
    }
  }
  EXPECT_LT(o.arms[0].Sharpe(), o.arms[1].Sharpe());
  EXPECT_LT(o.arms[1].Sharpe(), o.arms[2].Sharpe());
  ASSERT_TRUE(o.verdict.has_value()) << o.verdict_error;
  EXPECT_TRUE(o.verdict->passed) << o.verdict->Summary();
}

TEST(SweepPlanted, NullTwinFailsEveryArm) {
  const SweepOutcome o = RunPreset("demo_null");
  ASSERT_EQ(o.arms.size(), 3u);
  Print("null", o);
  ASSERT_TRUE(o.verdict.has_value()) << o.verdict_error;
  EXPECT_FALSE(o.verdict->passed) << o.verdict->Summary();
  const std::vector<double> dsr = ArmDsr(o);
  for (size_t i = 0; i < dsr.size(); ++i) {
    EXPECT_LT(dsr[i], 0.95) << o.arms[i].arm_id << " passes a DSR gate on the null twin";
  }
}

}  // namespace
}  // namespace flashtick
