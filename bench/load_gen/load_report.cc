// The load generator's shared measurements and latency fields (see load_report.h).
#include "bench/load_gen/load_report.h"

#include <time.h>

namespace flashtick::bench {

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int64_t ErrorCount(const std::map<std::string, int64_t>& errors) {
  int64_t n = 0;
  for (const auto& [code, count] : errors) n += count;
  return n;
}

nlohmann::json LatencyJson(const LatencyHistogram& h) {
  return {{"samples", h.count()},
          {"p50_ms", Ms(h.Percentile(0.50))},
          {"p90_ms", Ms(h.Percentile(0.90))},
          {"p99_ms", Ms(h.Percentile(0.99))},
          {"p999_ms", Ms(h.Percentile(0.999))},
          {"max_ms", Ms(h.max())},
          {"min_ms", Ms(h.min())},
          {"mean_ms", h.mean() * 1e-6}};
}

}  // namespace flashtick::bench
