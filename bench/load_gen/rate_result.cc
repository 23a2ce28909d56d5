// RateResult arithmetic, knee test and output (see rate_result.h).
#include "bench/load_gen/rate_result.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/load_gen/load_report.h"

namespace flashtick::bench {

double RateResult::achieved_rps() const {
  const double span = std::max(window_s, last_done_s);
  return span > 0 ? ok / span : 0;
}

int64_t RateResult::error_count() const { return ErrorCount(errors); }

std::string KneeReason(const RateResult& r, const KneeLimits& limits) {
  // The generator first: if it could not send on time, the other figures describe it,
  // not the server (its delay is charged to the latency, so they are still honest).
  // A lag under a tenth of the latency p99 changes little, whatever its size: with
  // few samples a rate, one scheduling hiccup of a shared machine is the lag's p99.
  const double lag_limit_ms =
      std::max(limits.max_send_lag_ms, 0.1 * Ms(r.latency_ns.Percentile(0.99)));
  if (Ms(r.send_lag_ns.Percentile(0.99)) > lag_limit_ms) return "generator_behind";
  if (r.scheduled > 0 && r.error_count() > limits.max_error_frac * r.scheduled) return "errors";
  if (r.achieved_rps() < limits.min_throughput_frac * r.scheduled_rps()) return "throughput";
  if (Ms(r.latency_ns.Percentile(0.99)) > limits.slo_ms) return "p99_over_slo";
  return "";
}

nlohmann::json RateJson(const RateResult& r, const KneeLimits& limits) {
  const std::string reason = KneeReason(r, limits);
  nlohmann::json j = {{"offered_rps", r.offered_rps},
                      {"window_s", r.window_s},
                      {"scheduled", r.scheduled},
                      {"scheduled_rps", r.scheduled_rps()},
                      {"achieved_rps", r.achieved_rps()},
                      {"ok", r.ok},
                      {"errors", r.errors},
                      {"error_count", r.error_count()},
                      {"send_lag_p50_ms", Ms(r.send_lag_ns.Percentile(0.50))},
                      {"send_lag_p99_ms", Ms(r.send_lag_ns.Percentile(0.99))},
                      {"send_lag_max_ms", Ms(r.send_lag_ns.max())},
                      {"generator_behind", reason == "generator_behind"},
                      {"max_inflight", r.max_inflight},
                      {"inflight_cap_waits", r.inflight_cap_waits},
                      {"generator_cpu_cores", r.wall_s > 0 ? r.cpu_s / r.wall_s : 0.0},
                      {"slo_ms", limits.slo_ms},
                      {"knee", !reason.empty()},
                      {"knee_reason", reason}};
  j.update(LatencyJson(r.latency_ns));
  return j;
}

std::string TableHeader() {
  return absl::StrFormat("%10s %10s %10s %9s %9s %9s %9s %7s %9s %6s  %s", "offered/s",
                         "sent/s", "achieved/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms",
                         "errors", "lag99 ms", "cpu", "knee");
}

std::string TableRow(const RateResult& r, const KneeLimits& limits) {
  std::string errors = absl::StrJoin(r.errors, ",", absl::PairFormatter("="));
  const std::string reason = KneeReason(r, limits);
  return absl::StrFormat(
      "%10.1f %10.1f %10.1f %9.3f %9.3f %9.3f %9.3f %7d %9.3f %6.2f  %s%s%s", r.offered_rps,
      r.scheduled_rps(), r.achieved_rps(), Ms(r.latency_ns.Percentile(0.5)),
      Ms(r.latency_ns.Percentile(0.99)), Ms(r.latency_ns.Percentile(0.999)),
      Ms(r.latency_ns.max()), r.error_count(), Ms(r.send_lag_ns.Percentile(0.99)),
      r.wall_s > 0 ? r.cpu_s / r.wall_s : 0.0, reason.empty() ? "-" : reason,
      errors.empty() ? "" : " ", errors);
}

}  // namespace flashtick::bench
