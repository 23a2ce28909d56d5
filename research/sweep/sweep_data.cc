// LoadSweepData (see sweep_data.h). Each generator keeps its own defaults except
// what the sweep configuration states; the planted generators take the label
// horizon k as their drift length, so the label of the call step sees the drift.
#include "research/sweep/sweep_data.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "ticks/bars.h"
#include "ticks/quotes.h"
#include "ticks/resample.h"
#include "research/synthetic/day_builder.h"
#include "research/synthetic/fgn.h"
#include "research/synthetic/hawkes.h"
#include "research/synthetic/regime.h"
#include "research/sweep/go_cue.h"
#include "research/sweep/tagged_cue.h"
#include "research/synthetic/keyed_cue.h"

namespace flashtick {
namespace {

constexpr char kFirstDate[] = "2026-01-05";  // a Monday; synthetic dates are weekdays after it

absl::StatusOr<SweepData> Planted(const SweepConfig& c) {
  const SyntheticDataConfig& s = c.data.synthetic;
  PlantedCueConfig p;
  p.steps_per_day = s.steps_per_day;
  p.num_days = s.days;
  p.lags = s.lags;
  p.events_per_lag_per_day = s.events_per_lag_per_day;
  p.horizon = c.horizon;
  p.sigma_bps = s.sigma_bps;
  p.drift_bps = s.drift_bps;
  p.motif_amplitude = s.motif_amplitude;
  p.flow_noise = s.flow_noise;
  p.spread_bps = s.spread_bps;
  p.cross_day = s.cross_day;
  p.null_twin = s.null_twin();
  p.seed = s.seed;
  KeyedCueConfig keyed{p, s.events_per_day, s.keys, s.key_window, s.key_spread_step, s.key_lead,
                        s.cue_key_shift, s.cue_sign_return_bps};
  if (keyed.key_window == 0) {  // every arm's window: the longest context
    keyed.key_window = *std::max_element(c.contexts.begin(), c.contexts.end());
  }
  ASSIGN_OR_RETURN(PlantedCueData d, s.keyed()    ? GenerateKeyedCue(keyed)
                                     : s.go()     ? GenerateGoCue(p, s.events_per_day)
                                     : s.tagged() ? GenerateTaggedCue(p, s.tag_ratio)
                                                  : GeneratePlantedCue(p));
  SweepData out;
  out.days = std::move(d.days);
  out.events = std::move(d.events);
  out.lags = s.lags;
  out.description = absl::StrCat(
      p.null_twin ? "planted cue, NULL TWIN (drift sign independent of the cue)" : "planted cue",
      s.keyed() ? absl::StrCat(" with keys (the go marker and its cue share one of ", s.keys,
                               " spread levels ", KeySpreadRatio(0, s.key_spread_step), "×, ",
                               KeySpreadRatio(1, s.key_spread_step), "×, ..., unique within ",
                               keyed.key_window, " steps",
                               s.cue_sign_return_bps > 0 ? "" : "; the sign is the cue's flow",
                               s.key_lead > 0 ? absl::StrCat(", its key ", s.key_lead,
                                                             " step(s) before it")
                                              : std::string(),
                               s.cue_key_shift > 0
                                   ? absl::StrCat(", the cue's level ", s.cue_key_shift,
                                                  " spreads above the go's")
                                   : std::string(),
                               s.cue_sign_return_bps > 0
                                   ? absl::StrCat("; the cue's flow is a buy burst and its sign a "
                                                  "price jump of ", s.cue_sign_return_bps, " bp")
                                   : std::string(),
                               "; the move is one jump of b·k)")
      : s.go()     ? " with a go marker (a spread widening at the call step; the sign is the "
                     "cue burst's)"
      : s.tagged() ? absl::StrCat(" with a tag per lag family (motif amplitude x", s.tag_ratio,
                                  " per family)")
                   : std::string(),
      ": ", s.days, " days × ", s.steps_per_day, " steps, lags {", absl::StrJoin(s.lags, ", "),
      "}, ", s.events_per_day.empty() ? absl::StrCat(s.events_per_lag_per_day, " events per lag")
                                    : absl::StrCat("{", absl::StrJoin(s.events_per_day, ", "),
                                                   "} events per lag"),
      " per day, drift ", s.drift_bps,
      " bp/step over k=", c.horizon, " steps vs noise σ=", s.sigma_bps, " bp/step, seed ", s.seed);
  return out;
}

absl::StatusOr<SweepData> Regime(const SweepConfig& c) {
  const SyntheticDataConfig& s = c.data.synthetic;
  RegimeConfig r;
  r.steps_per_day = s.steps_per_day;
  r.num_days = s.days;
  r.flip_prob = s.flip_prob;
  r.sigma_bps = s.sigma_bps;
  r.mu_over_sigma = s.mu_over_sigma;
  r.spread_bps = s.spread_bps;
  r.seed = s.seed;
  ASSIGN_OR_RETURN(RegimeData d, GenerateRegimeDays(r));
  SweepData out;
  out.days = std::move(d.days);
  out.description = absl::StrCat("regime switching: ", s.days, " days × ", s.steps_per_day,
                                 " steps, flip p=", s.flip_prob, ", μ/σ=", s.mu_over_sigma,
                                 ", σ=", s.sigma_bps, " bp, seed ", s.seed);
  return out;
}

absl::StatusOr<SweepData> LongMemory(const SweepConfig& c) {
  const SyntheticDataConfig& s = c.data.synthetic;
  const int64_t total = s.steps_per_day * s.days;
  ASSIGN_OR_RETURN(std::vector<double> noise, FractionalGaussianNoise(total, s.hurst, s.seed));
  DaySeries series;
  series.return_bps.resize(total);
  for (int64_t t = 0; t < total; ++t) series.return_bps[t] = s.sigma_bps * noise[t];
  series.flow.assign(total, 0.0);
  series.spread_bps.assign(total, s.spread_bps);
  SweepData out;
  ASSIGN_OR_RETURN(out.days, BuildDays(series, s.steps_per_day, "FGN", kFirstDate));
  out.description = absl::StrCat("long memory: returns σ·fGn(H=", s.hurst, "), ", s.days,
                                 " days × ", s.steps_per_day, " steps, seed ", s.seed);
  return out;
}

absl::StatusOr<SweepData> Hawkes(const SweepConfig& c) {
  const SyntheticDataConfig& s = c.data.synthetic;
  SweepData out;
  for (int d = 0; d < s.days; ++d) {
    HawkesDayConfig h;
    h.process.mu = s.hawkes_mu;
    h.process.alpha = s.hawkes_alpha;
    h.process.beta = s.hawkes_beta;
    h.steps = s.steps_per_day;
    h.impact_bps = s.impact_bps;
    h.spread_bps = s.spread_bps;
    h.seed = s.seed + static_cast<uint64_t>(d) * 0x9E3779B97F4A7C15ULL;
    ASSIGN_OR_RETURN(std::string date, AddWeekdays(kFirstDate, d));
    ASSIGN_OR_RETURN(SessionGrid g, HawkesDay(h, date));
    out.days.push_back(std::move(g));
  }
  out.description = absl::StrCat("Hawkes order flow: μ=", s.hawkes_mu, ", α=", s.hawkes_alpha,
                                 ", β=", s.hawkes_beta, ", impact ", s.impact_bps, " bp, ",
                                 s.days, " days × ", s.steps_per_day, " steps, seed ", s.seed);
  return out;
}

absl::StatusOr<SweepData> FromCsv(const SweepConfig& c) {
  const CsvDataConfig& v = c.data.csv_data;
  SweepData out;
  Sessions sessions;
  if (v.format == "bars") {
    std::vector<Bar> rows;
    for (const std::string& path : v.paths) {
      ASSIGN_OR_RETURN(std::vector<Bar> part, ReadBarsCsvFile(path));
      rows.insert(rows.end(), part.begin(), part.end());
    }
    CleanBarSeries clean = CleanBars(rows);
    out.cleaning = clean.report;
    ASSIGN_OR_RETURN(sessions, ResampleBars(clean.bars, v.session, v.instrument));
  } else {
    std::vector<Tick> rows;
    for (const std::string& path : v.paths) {
      ASSIGN_OR_RETURN(std::vector<Tick> part, ReadQuotesCsvFile(path));
      rows.insert(rows.end(), part.begin(), part.end());
    }
    CleanQuotes clean = CleanTicks(rows);
    out.cleaning = clean.report;
    ASSIGN_OR_RETURN(sessions, ResampleQuotes(clean.ticks, v.session, v.instrument));
  }
  out.sessions_skipped = sessions.days_skipped;
  const int have = static_cast<int>(sessions.days.size());
  if (v.first_day >= have) {
    return absl::InvalidArgumentError(absl::StrCat("data.csv.first_day ", v.first_day, " but ",
                                                   absl::StrJoin(v.paths, ", "), " hold only ",
                                                   have, " sessions"));
  }
  const int end = v.max_days > 0 ? std::min(have, v.first_day + v.max_days) : have;
  out.days.assign(std::make_move_iterator(sessions.days.begin() + v.first_day),
                  std::make_move_iterator(sessions.days.begin() + end));
  out.description = absl::StrCat(
      v.instrument, " ", v.format, " from ", absl::StrJoin(v.paths, ", "), ": sessions ",
      out.days.front().date, "..", out.days.back().date, " (", out.days.size(), " of ", have,
      ") of ", v.session.steps, " steps of ", v.session.step_us / 1e6, " s; cleaning dropped ",
      out.cleaning.dropped(), " of ", out.cleaning.input_rows, " rows");
  return out;
}

}  // namespace

absl::StatusOr<SweepData> LoadSweepData(const SweepConfig& c) {
  if (c.data.csv) return FromCsv(c);
  const std::string& g = c.data.synthetic.generator;
  if (c.data.synthetic.planted()) return Planted(c);
  if (g == "regime_switching") return Regime(c);
  if (g == "long_memory") return LongMemory(c);
  if (g == "hawkes") return Hawkes(c);
  return absl::InvalidArgumentError(absl::StrCat("data.synthetic.generator '", g, "' is unknown"));
}

}  // namespace flashtick
