// PoissonArrivals (see poisson_arrivals.h).
#include "bench/load_gen/poisson_arrivals.h"

namespace flashtick::bench {

PoissonArrivals::PoissonArrivals(double rate_per_s, uint64_t seed)
    : rng_(seed), gap_s_(rate_per_s) {}

int64_t PoissonArrivals::Next() {
  t_ns_ += gap_s_(rng_) * 1e9;
  return static_cast<int64_t>(t_ns_);
}

}  // namespace flashtick::bench
