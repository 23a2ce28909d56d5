// The sweep's verdict (docs/research/protocol.md, "Gates"): a longer context is
// justified only if the longest-context arm is (strictly) best out of sample, its
// Deflated Sharpe ratio over every configuration tried is ≥ min_dsr, and the PBO of
// the arm selection is ≤ max_pbo.
// Trials, like with like: every run is one trial. With one seed an arm is a run;
// with S seeds each (N, seed) is, so the DSR deflates by contexts × S trials whose
// variance is taken over the runs' own Sharpe ratios, and the series it tests is a
// run's too: each seed of the longest N is tested, and the median seed's DSR is the
// gate's (the spread is reported). "Best" and PBO choose among the Ns, each N's
// seeds averaged into one series. A pure function of per-arm OOS results, so the
// sweep engine calls it after the arms finish and the tests call it directly.
// Sharpe ratios are of the per-day strategy returns (strategy.h), T = test days.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "research/stats/classification.h"
#include "research/stats/pbo.h"
#include "research/stats/sharpe.h"

namespace flashtick {

struct ArmOutcome {
  std::string name;                   // e.g. "N=4096"
  int64_t context = 0;                // N
  std::vector<double> daily_returns;  // one per test day, the same days for every arm
  ClassificationMetrics metrics;      // OOS classification (for "best by" and reports)
  // With several training seeds per N: each seed's own series (daily_returns is
  // their equal-weight average); empty for one seed.
  std::vector<std::vector<double>> seed_daily_returns;
};

enum class BestBy { kSharpe, kAccuracy, kMacroF1, kLogLoss };

struct GateConfig {
  double min_dsr = 0.95;
  double max_pbo = 0.10;
  int pbo_blocks = 16;  // S; lowered to the largest even number ≤ T when T < S
  BestBy best_by = BestBy::kSharpe;
  EmaxMethod emax = EmaxMethod::kExact;
  // SR̂ of configurations tried beyond these arms (earlier sweeps, settings), so
  // the DSR deflates by every trial, not just the arms reported.
  std::vector<double> other_trial_sharpes;
};

struct GateVerdict {
  bool passed = false;
  int longest_arm = -1;  // index into the arms as given
  int best_arm = -1;     // by cfg.best_by; −1 when tied at the top
  std::vector<double> arm_sharpe;
  std::vector<double> arm_score;  // the best_by metric per arm (higher is better)
  bool dsr_ok = false, pbo_ok = false, best_ok = false;
  DeflatedSharpe dsr;  // the longest arm's (with seeds: its median seed's)
  // With seeds: the longest arm's DSR per seed, in seed order; dsr is the median.
  std::vector<DeflatedSharpe> seed_dsr;
  PboResult pbo;                     // lambdas dropped to keep the verdict small
  std::vector<std::string> reasons;  // plain sentences, one per gate
  std::string Summary() const;
};

// InvalidArgument for fewer than two arms, duplicate contexts, or daily return
// series of different lengths. Failing statistics (e.g. a constant return series)
// fail their gate with a reason instead of an error.
absl::StatusOr<GateVerdict> EvaluateGate(const std::vector<ArmOutcome>& arms,
                                         const GateConfig& cfg = GateConfig{});

}  // namespace flashtick
