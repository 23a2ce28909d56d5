// PoissonArrivals: the intended send times of an open-loop load at a fixed offered
// rate. Inter-arrival gaps are exponential with mean 1/rate (a Poisson process: the
// arrivals of many independent clients, as a trading floor's requests are), drawn
// from a seeded generator so a run is repeatable. The load generator sends each
// request at its intended time whatever the server is doing, and measures latency
// from that time, so a stalled server is charged for the requests it delayed
// (no coordinated omission; see load_gen.cc).
#pragma once

#include <cstdint>
#include <random>

namespace flashtick::bench {

class PoissonArrivals {
 public:
  // rate_per_s > 0.
  PoissonArrivals(double rate_per_s, uint64_t seed);

  // The next intended send time, in nanoseconds after the schedule's start.
  int64_t Next();

 private:
  std::mt19937_64 rng_;
  std::exponential_distribution<double> gap_s_;
  double t_ns_ = 0;  // double: sums of sub-ns remainders do not drift
};

}  // namespace flashtick::bench
