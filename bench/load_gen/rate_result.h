// RateResult: what one offered rate of the sweep measured, the knee test on it, and
// its JSON line and table row. Kept apart from the gRPC driver so the tests check
// the arithmetic without a server.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "bench/load_gen/latency_histogram.h"
#include "nlohmann/json.hpp"

namespace flashtick::bench {

struct RateResult {
  double offered_rps = 0;       // the target rate
  double window_s = 0;          // the measured window (warmup excluded)
  int64_t scheduled = 0;        // intended arrivals in the window (Poisson, so ≈ offered·window)
  int64_t ok = 0;               // answered OK and of the expected size
  std::map<std::string, int64_t> errors;  // by gRPC status name (BAD_RESPONSE: OK, wrong size)
  double last_done_s = 0;       // last answer of a measured request, after the window opened
  LatencyHistogram latency_ns;  // OK answers only, from the INTENDED send time
  LatencyHistogram send_lag_ns; // actual send − intended send: the generator's own delay
  int64_t max_inflight = 0;     // most requests outstanding at once
  int64_t inflight_cap_waits = 0;  // sends held back by --max-inflight
  double cpu_s = 0;             // the generator process's CPU time over the rate's run
  double wall_s = 0;            // the rate's whole run: warmup, window and drain

  // Intended arrivals a second in the window: the offered load this run really had.
  double scheduled_rps() const { return window_s > 0 ? scheduled / window_s : 0; }
  // OK answers a second: over the window, or until the last answer if that is later
  // (a server that falls behind finishes the window's work late, and is charged for it).
  double achieved_rps() const;
  int64_t error_count() const;
};

struct KneeLimits {
  double slo_ms = 50;             // p99 above this: past the knee
  double min_throughput_frac = 0.9;  // achieved < this × scheduled rate: past the knee
  double max_error_frac = 0.01;   // errors / scheduled above this: past the knee
  double max_send_lag_ms = 1;     // send-lag p99 above this and above 0.1 × latency p99:
                                  // the generator fell behind
};

// "" when the rate is within every limit, else the first limit it broke:
// "generator_behind", "errors", "throughput", "p99_over_slo".
std::string KneeReason(const RateResult& r, const KneeLimits& limits);

// The rate's JSON fields (bench-specific; load_gen.cc adds the shared ones).
nlohmann::json RateJson(const RateResult& r, const KneeLimits& limits);

std::string TableHeader();
std::string TableRow(const RateResult& r, const KneeLimits& limits);

}  // namespace flashtick::bench
