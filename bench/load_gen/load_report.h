// What the load generator's three modes (the open-loop sweep, closed loop, the tick
// stream) measure and report alike, defined once so that their JSON lines name and
// compute the latency fields the same way: tests/load/run_load_gen.py and
// bench/serve_latency/latency_table.py read them from every mode.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "bench/load_gen/latency_histogram.h"
#include "nlohmann/json.hpp"

namespace flashtick::bench {

// Nanoseconds as milliseconds, the unit of every *_ms field and table column.
inline double Ms(int64_t ns) { return static_cast<double>(ns) * 1e-6; }

// The whole process's CPU seconds: gRPC's own threads work for the generator too.
double ProcessCpuSeconds();

// Requests that failed, over every status of an errors-by-status map.
int64_t ErrorCount(const std::map<std::string, int64_t>& errors);

// "samples", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "min_ms", "mean_ms" of
// `h`; a mode adds them to its line with json::update.
nlohmann::json LatencyJson(const LatencyHistogram& h);

}  // namespace flashtick::bench
