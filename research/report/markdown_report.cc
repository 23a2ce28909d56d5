// MarkdownReport (see markdown_report.h). Reads the JSON defensively (value() with
// defaults), since a report may be re-rendered from a file another version wrote.
#include "research/report/markdown_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "research/report/stop_reason_text.h"

namespace flashtick {
namespace {

using nlohmann::json;

std::string F(const json& v, const char* fmt = "%.4f") {
  if (!v.is_number()) return "n/a";
  // snprintf, not absl::StrFormat: clang requires StrFormat's format to be constexpr.
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v.get<double>());
  return buf;
}

std::string Bytes(const json& v) {
  if (!v.is_number()) return "n/a";
  const double b = v.get<double>();
  if (b >= 1 << 30) return absl::StrFormat("%.2f GiB", b / (1 << 30));
  return absl::StrFormat("%.1f MiB", b / (1 << 20));
}

// A mean step time in ms ("—" when null: no such step), with the step count when
// `count` is a number.
std::string StepMs(const json& ms, const json& count) {
  if (!ms.is_number()) return "—";
  return absl::StrCat(F(ms, ms.get<double>() < 100 ? "%.2f ms" : "%.0f ms"),
                      count.is_number() ? absl::StrCat(" ×", count.dump()) : "");
}

const json& At(const json& j, const char* key) {
  static const json* null = new json(nullptr);
  if (!j.is_object()) return *null;
  auto it = j.find(key);
  return it == j.end() ? *null : *it;
}

std::string S(const json& j, const char* key) {
  const json& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : (v.is_null() ? "" : v.dump());
}

void Verdict(const json& r, std::string* md) {
  const json& v = At(r, "verdict");
  if (!v.is_object()) {
    absl::StrAppend(md, "## Verdict: none\n\n", S(r, "verdict_error"), "\n\n");
    return;
  }
  const bool passed = At(v, "passed").is_boolean() && At(v, "passed").get<bool>();
  absl::StrAppend(md, "## Verdict: ", passed ? "PASS" : "FAIL", "\n\n");
  if (passed) {
    absl::StrAppend(md, "**The longest context (N=", At(v, "longest_context").dump(),
                    ") pays for itself on this data**: it is best out of sample, its Deflated "
                    "Sharpe ratio clears the bar and the selection is unlikely to be overfit.\n\n");
  } else {
    absl::StrAppend(md, "**The longest context (N=", At(v, "longest_context").dump(),
                    ") is not justified on this data.** The gates that failed say why:\n\n");
  }
  const json& reasons = At(v, "reasons");
  if (reasons.is_array()) {
    for (const json& s : reasons) absl::StrAppend(md, "- ", s.get<std::string>(), "\n");
  }
  absl::StrAppend(md, "\n| gate | value | bar | ok |\n|---|---|---|---|\n");
  const json& dsr = At(v, "dsr");
  const json& pbo = At(v, "pbo");
  absl::StrAppend(md, "| longest N best by ", S(v, "best_by"), " | best N = ",
                  At(v, "best_context").is_null() ? "tie" : At(v, "best_context").dump(),
                  " | N = ", At(v, "longest_context").dump(), " | ",
                  At(v, "best_ok") == true ? "yes" : "no", " |\n");
  absl::StrAppend(md, "| Deflated Sharpe | ", F(At(dsr, "dsr")), " (SR ", F(At(dsr, "sharpe")),
                  " vs SR0 ", F(At(dsr, "sr0")), ", ", At(dsr, "trials").dump(),
                  " trials) | >= ", F(At(v, "min_dsr"), "%.2f"), " | ",
                  At(v, "dsr_ok") == true ? "yes" : "no", " |\n");
  absl::StrAppend(md, "| PBO (CSCV, S=", At(pbo, "blocks").dump(), ") | ", F(At(pbo, "pbo")),
                  " (", At(pbo, "combinations").dump(), " combinations, ",
                  At(pbo, "median_ties").dump(), " median ties) | <= ",
                  F(At(v, "max_pbo"), "%.2f"), " | ", At(v, "pbo_ok") == true ? "yes" : "no",
                  " |\n\nPBO tie rule: ", S(pbo, "tie_rule"), ".\n\n");
  const json& seeds = At(v, "seed_dsr");
  if (seeds.is_array() && !seeds.empty()) {
    std::vector<std::string> each;
    for (const json& d : seeds) {
      each.push_back(absl::StrCat(F(At(d, "dsr")), " (SR ", F(At(d, "sharpe")), ")"));
    }
    absl::StrAppend(md, "Deflated Sharpe of N=", At(v, "longest_context").dump(),
                    " per training seed: ", absl::StrJoin(each, ", "),
                    "; the gate takes the median seed. Every (N, seed) run counts as a trial.\n\n");
  }
}

// Wilson score interval at 95% for h hits in n trials.
std::pair<double, double> Wilson(double h, double n) {
  if (n <= 0) return {0, 1};
  const double z = 1.959964, p = h / n, z2n = z * z / n;
  const double mid = (p + z2n / 2) / (1 + z2n);
  const double half = z * std::sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n);
  return {mid - half, mid + half};
}

// The spread of each N's daily Sharpe over its training seeds (the verdict's input).
void SeedSpread(const json& arms, std::string* md) {
  std::vector<std::pair<int64_t, std::vector<double>>> by_n;
  for (const json& a : arms) {
    const json& n = At(a, "context");
    const json& s = At(At(a, "benefit"), "sharpe");
    if (!n.is_number() || !s.is_number()) continue;
    if (by_n.empty() || by_n.back().first != n.get<int64_t>()) by_n.push_back({n.get<int64_t>(), {}});
    by_n.back().second.push_back(s.get<double>());
  }
  bool several = false;
  for (const auto& [n, s] : by_n) several |= s.size() > 1;
  if (!several) return;
  absl::StrAppend(md, "### Spread over training seeds\n\n| N | seeds | daily Sharpe min | median | "
                      "max |\n|---|---|---|---|---|\n");
  for (auto& [n, s] : by_n) {
    std::sort(s.begin(), s.end());
    absl::StrAppend(md, "| ", n, " | ", s.size(), " | ", F(json(s.front())), " | ",
                    F(json(s[(s.size() - 1) / 2])), " | ", F(json(s.back())), " |\n");
  }
  absl::StrAppend(md, "\n");
}

void Arms(const json& r, std::string* md) {
  const json& arms = At(r, "arms");
  if (!arms.is_array()) return;
  absl::StrAppend(md, "## Cost and benefit per arm\n\n",
                  "| arm | N | state | steps | s/epoch | plain step | refresh step | tokens/s | "
                  "peak memory | accuracy | macro-F1 | log-loss | daily Sharpe | total return | "
                  "trades |\n",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const json& a : arms) {
    const json& c = At(a, "cost");
    const json& b = At(a, "benefit");
    absl::StrAppend(md, "| ", S(a, "arm_id"), " | ", At(a, "context").dump(), " | ",
                    S(a, "state"), " | ", At(a, "steps").dump(), "/", At(a, "total_steps").dump(),
                    " | ", F(At(c, "seconds_per_epoch"), "%.2f"), " | ",
                    StepMs(At(c, "mean_plain_step_ms"), json(nullptr)), " | ",
                    StepMs(At(c, "mean_refresh_step_ms"), At(c, "refresh_steps")), " | ",
                    F(At(c, "tokens_per_second"), "%.0f"), " | ", Bytes(At(c, "peak_memory_bytes")),
                    " | ", F(At(b, "accuracy")), " | ", F(At(b, "macro_f1")), " | ",
                    F(At(b, "log_loss")), " | ", F(At(b, "sharpe")), " | ",
                    F(At(b, "total_return"), "%.5f"), " | ",
                    At(b, "trades").is_null() ? "n/a" : At(b, "trades").dump(), " |\n");
  }
  absl::StrAppend(md, "\nPlain step, refresh step: the mean wall-clock of each kind of training "
                      "step over every fold (×k: k refresh steps). A refresh step is "
                      "Sophia-H's Hessian refresh, every hessian_interval steps: the step "
                      "that also runs the Hutchinson Hessian-vector product (HVP); — where an "
                      "arm had none (AdamW).\n");
  absl::StrAppend(md, "\nKernel path of the test-day predictions: ");
  std::vector<std::string> paths;
  for (const json& a : arms) paths.push_back(absl::StrCat(S(a, "arm_id"), " ", S(a, "kernel_path")));
  absl::StrAppend(md, absl::StrJoin(paths, ", "), ".\n\n");
  // Where each arm trained (a pod and node for Kubernetes arms, docs/deploy.md).
  std::vector<std::string> places;
  for (const json& a : arms) {
    if (!S(a, "ran_on").empty()) {
      places.push_back(absl::StrCat(S(a, "arm_id"), " ", S(a, "ran_on")));
    }
  }
  if (!places.empty()) {
    absl::StrAppend(md, "Where each arm ran: ", absl::StrJoin(places, ", "), ".\n\n");
  }
  SeedSpread(arms, md);
  std::string stops;
  for (const json& a : arms) {
    if (!S(a, "stop_reason").empty()) {
      absl::StrAppend(&stops, "- ", S(a, "arm_id"), ": ", CompactStopReason(S(a, "stop_reason")), "\n");
    }
  }
  if (!stops.empty()) absl::StrAppend(md, "Training that stopped before its planned steps:\n\n",
                                      stops, "\n");
  std::string restarts;
  for (const json& a : arms) {
    if (!S(a, "restart_choice").empty()) {
      absl::StrAppend(&restarts, "- ", S(a, "arm_id"), ": ", S(a, "restart_choice"), "\n");
    }
  }
  if (!restarts.empty()) {
    absl::StrAppend(md, "Restarts of the first fold (training.restarts, or training.stall_restarts: "
                        "a fresh start when one stalled; the start with the lowest validation "
                        "loss went on, the others were dropped; their steps count in the "
                        "cost):\n\n", restarts, "\n");
  }

  bool events = false;
  for (const json& a : arms) events |= At(a, "events").is_array() && !At(a, "events").empty();
  if (!events) return;
  absl::StrAppend(md, "### Accuracy at the planted call steps, per lag family\n\n",
                  "A model with context N can call an event of lag L only if N > L; expect about "
                  "1 for the lags it sees and 1/2 for the others (the null twin: 1/2 "
                  "everywhere). Each cell: hit rate [95% Wilson interval] (hits/events); "
                  "'seen' marks L < N; then the sign accuracy of the up/down calls among them "
                  "(a model that cannot see the cue may say flat, a miss that trades nothing; "
                  "its calls are a coin).\n\n| arm |");
  const json& first = At(arms[0], "events");
  for (const json& e : first) absl::StrAppend(md, " L=", At(e, "lag").dump(), " |");
  absl::StrAppend(md, "\n|---|");
  for (size_t i = 0; i < first.size(); ++i) absl::StrAppend(md, "---|");
  absl::StrAppend(md, "\n");
  for (const json& a : arms) {
    absl::StrAppend(md, "| ", S(a, "arm_id"), " |");
    for (const json& e : At(a, "events")) {
      const json& h = At(e, "hits");
      const json& n = At(e, "events");
      const auto [lo, hi] = Wilson(h.is_number() ? h.get<double>() : 0,
                                   n.is_number() ? n.get<double>() : 0);
      const bool seen = At(e, "lag").is_number() && At(a, "context").is_number() &&
                        At(e, "lag").get<int64_t>() < At(a, "context").get<int64_t>();
      absl::StrAppend(md, " ", F(At(e, "rate"), "%.3f"), " [", F(json(lo), "%.2f"), ", ",
                      F(json(hi), "%.2f"), "] (", h.dump(), "/", n.dump(), ")",
                      seen ? " seen" : "");
      const json& calls = At(e, "calls");
      if (calls.is_number() && calls.get<double>() > 0) {
        const double c = calls.get<double>();
        const json& ch = At(e, "call_hits");
        absl::StrAppend(md, "; calls ", F(json((ch.is_number() ? ch.get<double>() : 0) / c), "%.2f"),
                        " of ", calls.dump());
      }
      absl::StrAppend(md, " |");
    }
    absl::StrAppend(md, "\n");
  }
  absl::StrAppend(md, "\n");
}

// Where the call step looks (fold_evaluator.h): per arm and seen lag family, for
// each layer the head that puts the most weight on the cue, that weight, and the
// same head's weight on the call step itself, then the call step's attention rollout
// onto the cue (attention_rollout.h), beside 1/window (uniform attention).
void AttentionOnCue(const json& r, std::string* md) {
  const json& arms = At(r, "arms");
  const json& heads = At(At(At(r, "config"), "model"), "heads");
  const json& layers = At(At(At(r, "config"), "model"), "layers");
  if (!arms.is_array() || !heads.is_number_integer() || !layers.is_number_integer()) return;
  const size_t h = heads.get<size_t>(), L = layers.get<size_t>();
  if (h == 0 || L == 0) return;
  std::string rows;
  for (const json& a : arms) {
    const int64_t n = At(a, "context").is_number() ? At(a, "context").get<int64_t>() : 0;
    for (const json& e : At(a, "events")) {
      const json& cue = At(e, "cue_weight");
      const json& self = At(e, "self_weight");
      const json& k = At(e, "attention_events");
      if (!cue.is_array() || cue.size() != L * h || !self.is_array() || self.size() != cue.size() ||
          !k.is_number() || k.get<int64_t>() == 0 || n == 0) {
        continue;
      }
      absl::StrAppend(&rows, "| ", S(a, "arm_id"), " | ", At(e, "lag").dump(), " | ", k.dump(), " |");
      for (size_t l = 0; l < L; ++l) {
        size_t best = l * h;
        for (size_t i = l * h; i < (l + 1) * h; ++i)
          if (cue[i].is_number() && cue[i].get<double>() > cue[best].get<double>()) best = i;
        absl::StrAppend(&rows, " ", F(cue[best], "%.3f"), " (h", best - l * h, "); self ",
                        F(self[best], "%.3f"), " |");
      }
      const json& rollout = At(e, "cue_rollout");
      absl::StrAppend(&rows, " ", rollout.is_number() ? F(rollout, "%.3f") : std::string("—"),
                      " | ", F(json(1.0 / static_cast<double>(n)), "%.2g"), " |\n");
    }
  }
  if (rows.empty()) return;
  absl::StrAppend(md, "### Where the call step looks\n\n",
                  "For the first events of each family whose cue is inside the window (test "
                  "days, in order): the softmax weight of the call step's query on the cue "
                  "step, per layer for the head that looks at it most, and that head's "
                  "weight on the call step itself (it carries the cue's key too). Uniform "
                  "attention would give 1/window. A family the arm misses with weight on "
                  "the cue fails at reading the sign; one without, at finding the cue. "
                  "Rollout: the share of the call step's output that traces back to the "
                  "cue through every layer, residual included (Abnar and Zuidema 2020; "
                  "½ per layer for a step that only keeps its own residual), which also "
                  "credits a cue the call step reaches through an intermediate step.\n\n"
                  "| arm | L | events |");
  for (size_t l = 0; l < L; ++l) absl::StrAppend(md, " layer ", l, ": on the cue (head); on itself |");
  absl::StrAppend(md, " rollout onto the cue | 1/window |\n|---|---|---|");
  for (size_t l = 0; l <= L + 1; ++l) absl::StrAppend(md, "---|");
  absl::StrAppend(md, "\n", rows, "\n");
}

void Precision(const json& r, std::string* md) {
  const json& p = At(r, "precision_check");
  absl::StrAppend(md, "## Precision check\n\n");
  if (!p.is_object() || At(p, "ran") != true) {
    absl::StrAppend(md, p.is_object() ? S(p, "note") : "Not run (no chosen arm).", "\n\n");
    return;
  }
  absl::StrAppend(md, "Arm ", S(p, "arm_id"), " on ", S(p, "date"), ", ", At(p, "windows").dump(),
                  " windows, ", At(p, "positions").dump(), " scored positions: ", S(p, "note"),
                  ".\n\n| | value |\n|---|---|\n| path under test | ", S(p, "fast_path"), " (",
                  S(p, "fast_dtype"), ") |\n| reference | ", S(p, "reference_path"), " (",
                  S(p, "reference_dtype"), ") |\n| max relative logit error | ",
                  F(At(p, "max_rel_logit_error"), "%.3g"), " |\n| max abs probability error | ",
                  F(At(p, "max_abs_prob_error"), "%.3g"), " |\n| label flips | ",
                  At(p, "flips").dump(), " (", F(At(p, "flip_share"), "%.4f"), ") |\n\n");
  if (At(p, "early") == true) {
    absl::StrAppend(md, "Run as soon as this arm finished, while the other arms trained.\n\n");
  }
}

// "537.0 s wall-clock over 2 calls (this call 66.6 s)": a sweep cut off by a time limit
// resumes in a later call, and what it cost is the sum (sweep_clock.h). Reports written
// before the ledger existed have no "calls".
std::string WallClock(const json& r) {
  std::string s = absl::StrCat(F(At(r, "wall_seconds"), "%.1f"), " s wall-clock");
  if (r.contains("calls") && r["calls"].is_number_integer() && r["calls"].get<int>() > 1) {
    absl::StrAppend(&s, " over ", r["calls"].get<int>(), " calls (this call ",
                    F(At(r, "call_seconds"), "%.1f"), " s)");
  }
  return s;
}

}  // namespace

std::string MarkdownReport(const json& r) {
  std::string md = absl::StrCat("# Sweep report: ", S(r, "name"), "\n\n");
  const json& data = At(r, "data");
  absl::StrAppend(&md, "Status: ", S(r, "status"), ". Backend ", S(r, "backend"), " (device ",
                  S(r, "device"), "), ", WallClock(r), ".\n\n",
                  "Data: ", S(data, "description"), ". ", At(data, "days").dump(), " days of ",
                  At(data, "steps_per_day").dump(), " steps; ", At(data, "test_days").dump(),
                  " test days (T for the Sharpe statistics).\n\n");
  if (!S(data, "cleaning").empty()) absl::StrAppend(&md, "Cleaning: ", S(data, "cleaning"), "\n\n");
  Verdict(r, &md);
  Arms(r, &md);
  AttentionOnCue(r, &md);
  Precision(r, &md);
  absl::StrAppend(&md, "## Plots\n\n");
  const json& plots = At(r, "plots");
  if (plots.is_array()) {
    for (const json& p : plots) {
      const std::string name = p.get<std::string>();
      absl::StrAppend(&md, "![", name.substr(0, name.rfind('.')), "](", name, ")\n\n");
    }
  }
  if (!S(r, "plots_note").empty()) absl::StrAppend(&md, S(r, "plots_note"), "\n\n");
  const json& cfg = At(r, "config");
  const json& method = At(r, "method");
  absl::StrAppend(&md, "## Method\n\n");
  for (const char* key : {"epoch", "eval", "strategy", "warm_start"}) {
    absl::StrAppend(&md, "- ", key, ": ", S(method, key), "\n");
  }
  const json& alpha_bps = At(At(cfg, "labels"), "alpha_bps");
  const bool fixed_alpha = alpha_bps.is_number() && alpha_bps.get<double>() > 0;
  absl::StrAppend(&md, "- label horizon k = ", At(At(cfg, "labels"), "horizon").dump(),
                  fixed_alpha ? absl::StrCat("; alpha fixed at ", F(alpha_bps, "%.2f"), " bp")
                              : std::string("; alpha balanced on each fold's training samples"),
                  "; walk-forward ",
                  At(cfg, "walk_forward").dump(), "\n\n<details><summary>Configuration</summary>"
                  "\n\n```json\n", cfg.dump(2), "\n```\n\n</details>\n");
  return md;
}

}  // namespace flashtick
