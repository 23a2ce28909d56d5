// Tick features: what the model sees per 1-second step of a session grid.
// F = kNumFeatures columns per step, row-major [T, F] float32:
//   0 log_return     log(mid_t / mid_{t-1}) · 1e4 (basis points; 0 at the first step)
//   1 spread_bps     (ask − bid) / mid · 1e4
//   2 signed_volume  sign(flow)·log1p(|flow|) of the signed trade volume in the second
//   3 tod_sin        sin(2π · seconds since open / 23,400)
//   4 tod_cos        cos(2π · seconds since open / 23,400)
//   5 session_start  1 at the first step of a session (an overnight gap before it), else 0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flashtick {

constexpr int kNumFeatures = 6;
constexpr int kSessionSeconds = 23400;  // 09:30–16:00, one step a second

// One session on the 1-second grid (research/ builds these from CSV or generators).
struct SessionGrid {
  std::string instrument;
  std::string date;              // YYYY-MM-DD
  std::vector<double> bid, ask;  // last quote carried forward, per step
  std::vector<double> flow;      // signed traded volume in the step (+ buys, − sells)
  int64_t steps() const { return static_cast<int64_t>(bid.size()); }
  double mid(int64_t t) const { return 0.5 * (bid[t] + ask[t]); }
};

// Features of one session, [steps, kNumFeatures] row-major.
std::vector<float> ComputeFeatures(const SessionGrid& day);
// Row t of ComputeFeatures(day) into row[0..kNumFeatures): reads steps t-1 and t
// only, so a stream appends a step in O(1) instead of recomputing the day.
void ComputeFeatureRow(const SessionGrid& day, int64_t t, float* row);

// A simple synthetic session: random-walk mid with a slowly varying spread and
// signed flow; deterministic from the seed. (research/synthetic/ holds the research
// generators with planted signals.)
SessionGrid SimpleSyntheticDay(uint64_t seed, int64_t steps = kSessionSeconds,
                               const std::string& instrument = "SYNTH",
                               const std::string& date = "2026-01-02");

}  // namespace flashtick
