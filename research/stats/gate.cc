// EvaluateGate (see gate.h). PBO columns are ordered by context, shortest first,
// so its in-sample tie rule (lowest index) never favours the longer arm.
#include "research/stats/gate.h"

#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace flashtick {
namespace {

double Score(const ArmOutcome& a, BestBy by, double sharpe) {
  switch (by) {
    case BestBy::kSharpe:
      return sharpe;
    case BestBy::kAccuracy:
      return a.metrics.accuracy;
    case BestBy::kMacroF1:
      return a.metrics.macro_f1;
    case BestBy::kLogLoss:
      return -a.metrics.log_loss;  // lower loss is better
  }
  return sharpe;
}

const char* ByName(BestBy by) {
  switch (by) {
    case BestBy::kSharpe:
      return "OOS daily Sharpe";
    case BestBy::kAccuracy:
      return "OOS accuracy";
    case BestBy::kMacroF1:
      return "OOS macro-F1";
    case BestBy::kLogLoss:
      return "OOS log-loss";
  }
  return "?";
}

}  // namespace

std::string GateVerdict::Summary() const {
  return absl::StrCat(passed ? "PASS" : "FAIL", ": ", absl::StrJoin(reasons, " "));
}

absl::StatusOr<GateVerdict> EvaluateGate(const std::vector<ArmOutcome>& arms,
                                         const GateConfig& cfg) {
  if (arms.size() < 2) return absl::InvalidArgumentError("gate: a sweep needs at least two arms");
  const size_t days = arms[0].daily_returns.size();
  for (const ArmOutcome& a : arms) {
    if (a.daily_returns.size() != days) {
      return absl::InvalidArgumentError(absl::StrCat("gate: arm ", a.name, " has ",
                                                     a.daily_returns.size(), " test days, arm ",
                                                     arms[0].name, " has ", days));
    }
  }
  std::vector<int> order(arms.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return arms[a].context < arms[b].context; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (arms[order[i]].context == arms[order[i - 1]].context) {
      return absl::InvalidArgumentError(
          absl::StrCat("gate: two arms share context N=", arms[order[i]].context));
    }
  }
  GateVerdict v;
  v.longest_arm = order.back();
  const ArmOutcome& longest = arms[v.longest_arm];
  for (const ArmOutcome& a : arms) {
    v.arm_sharpe.push_back(SharpeRatio(a.daily_returns));
    v.arm_score.push_back(Score(a, cfg.best_by, v.arm_sharpe.back()));
  }

  // 1. Best out of sample, strictly: a tie at the top justifies nothing.
  const double top = *std::max_element(v.arm_score.begin(), v.arm_score.end());
  const int at_top = static_cast<int>(std::count(v.arm_score.begin(), v.arm_score.end(), top));
  v.best_arm = at_top == 1
                   ? static_cast<int>(std::find(v.arm_score.begin(), v.arm_score.end(), top) -
                                      v.arm_score.begin())
                   : -1;
  v.best_ok = v.best_arm == v.longest_arm;
  if (v.best_ok) {
    v.reasons.push_back(absl::StrFormat("The longest context (%s) is best by %s (%.4g).",
                                        longest.name, ByName(cfg.best_by), top));
  } else if (v.best_arm < 0) {
    v.reasons.push_back(
        absl::StrFormat("%d arms tie for best by %s (%.4g); a tie does not justify "
                        "the longer context.",
                        at_top, ByName(cfg.best_by), top));
  } else {
    v.reasons.push_back(absl::StrFormat(
        "The longest context (%s) is not best by %s: %s is (%.4g vs %.4g).", longest.name,
        ByName(cfg.best_by), arms[v.best_arm].name, top, v.arm_score[v.longest_arm]));
  }

  // 2. Deflated Sharpe of the longest arm against every run (gate.h: like with like).
  std::vector<double> trials;
  for (const ArmOutcome& a : arms) {
    if (a.seed_daily_returns.empty()) {
      trials.push_back(SharpeRatio(a.daily_returns));
    } else {
      for (const std::vector<double>& r : a.seed_daily_returns) trials.push_back(SharpeRatio(r));
    }
  }
  trials.insert(trials.end(), cfg.other_trial_sharpes.begin(), cfg.other_trial_sharpes.end());
  absl::StatusOr<DeflatedSharpe> dsr;
  if (longest.seed_daily_returns.empty()) {
    dsr = DeflatedSharpeRatio(longest.daily_returns, trials, cfg.emax);
  } else {
    for (const std::vector<double>& r : longest.seed_daily_returns) {
      auto one = DeflatedSharpeRatio(r, trials, cfg.emax);
      if (!one.ok()) {
        dsr = one.status();
        v.seed_dsr.clear();
        break;
      }
      v.seed_dsr.push_back(*one);
    }
    if (!v.seed_dsr.empty()) {
      std::vector<DeflatedSharpe> sorted = v.seed_dsr;
      std::sort(sorted.begin(), sorted.end(),
                [](const DeflatedSharpe& a, const DeflatedSharpe& b) { return a.dsr < b.dsr; });
      dsr = sorted[(sorted.size() - 1) / 2];  // the median (the lower one of an even count)
    }
  }
  const std::string tested = longest.seed_daily_returns.empty()
                                 ? longest.name
                                 : absl::StrCat(longest.name, "'s median seed");
  if (dsr.ok()) {
    v.dsr = *dsr;
    v.dsr_ok = dsr->dsr >= cfg.min_dsr;
    v.reasons.push_back(absl::StrFormat(
        "Deflated Sharpe of %s: %.4f over %d configurations run (SR %.4f per day vs SR0 %.4f); "
        "the gate needs >= %.2f.",
        tested, dsr->dsr, dsr->trials, dsr->sharpe, dsr->sr0, cfg.min_dsr));
  } else {
    v.reasons.push_back(absl::StrCat("Deflated Sharpe of ", longest.name,
                                     " cannot be computed: ", dsr.status().message(), "."));
  }

  // 3. PBO of choosing among the arms.
  int blocks = std::min<int>(cfg.pbo_blocks, static_cast<int>(days) / 2 * 2);
  std::vector<std::vector<double>> m(days, std::vector<double>(arms.size()));
  for (size_t t = 0; t < days; ++t) {
    for (size_t j = 0; j < order.size(); ++j) m[t][j] = arms[order[j]].daily_returns[t];
  }
  auto pbo = ProbabilityOfBacktestOverfitting(m, blocks);
  if (pbo.ok()) {
    v.pbo = std::move(*pbo);
    v.pbo.lambdas.clear();
    v.pbo_ok = v.pbo.pbo <= cfg.max_pbo;
    v.reasons.push_back(absl::StrFormat(
        "PBO %.4f over %d CSCV combinations of S=%d blocks (%d at the median rank, counted as "
        "overfit); the gate needs <= %.2f.",
        v.pbo.pbo, v.pbo.combinations, blocks, v.pbo.median_ties, cfg.max_pbo));
    if (blocks < cfg.pbo_blocks) {
      v.reasons.push_back(absl::StrFormat("Only %d test days: S lowered from %d to %d.", days,
                                          cfg.pbo_blocks, blocks));
    }
  } else {
    v.reasons.push_back(absl::StrCat("PBO cannot be computed: ", pbo.status().message(), "."));
  }
  v.passed = v.best_ok && v.dsr_ok && v.pbo_ok;
  return v;
}

}  // namespace flashtick
