// The load generator's arithmetic without a server: its histogram's percentiles
// against exact nearest-rank ones (never below, at most 2/256 above), the Poisson
// arrivals' rate and gap distribution, the knee rules, and the latency fields that
// every mode's JSON line shares.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "bench/load_gen/closed_loop_load.h"
#include "bench/load_gen/latency_histogram.h"
#include "bench/load_gen/load_report.h"
#include "bench/load_gen/poisson_arrivals.h"
#include "bench/load_gen/rate_result.h"
#include "bench/load_gen/tick_stream_load.h"

namespace flashtick::bench {
namespace {

int64_t ExactPercentile(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(q * v.size())));
  return v[rank - 1];
}

TEST(LatencyHistogram, BucketsTileTheRange) {
  // Consecutive buckets meet exactly, and every value lands in the bucket whose
  // highest value is at or above it.
  for (int i = 1; i <= LatencyHistogram::BucketIndex(LatencyHistogram::kMaxValue); ++i) {
    ASSERT_EQ(LatencyHistogram::BucketIndex(LatencyHistogram::BucketHighest(i - 1) + 1), i);
    ASSERT_EQ(LatencyHistogram::BucketIndex(LatencyHistogram::BucketHighest(i)), i);
  }
  for (int64_t v : {int64_t{0}, int64_t{255}, int64_t{256}, int64_t{1000}, int64_t{123456789},
                    LatencyHistogram::kMaxValue}) {
    EXPECT_GE(LatencyHistogram::BucketHighest(LatencyHistogram::BucketIndex(v)), v);
  }
}

TEST(LatencyHistogram, PercentilesWithinResolutionOfExact) {
  // Log-normal latencies around 2 ms with a heavy tail, in ns.
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> lat(std::log(2e6), 1.0);
  std::vector<int64_t> samples;
  LatencyHistogram h;
  for (int i = 0; i < 200000; ++i) {
    const auto v = static_cast<int64_t>(lat(rng));
    samples.push_back(v);
    h.Record(v);
  }
  ASSERT_EQ(h.count(), 200000);
  for (double q : {0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    const int64_t exact = ExactPercentile(samples, q);
    const int64_t got = h.Percentile(q);
    EXPECT_GE(got, exact) << "q=" << q;
    EXPECT_LE(got, exact + exact * 2 / LatencyHistogram::kSubBuckets) << "q=" << q;
  }
  EXPECT_EQ(h.max(), *std::max_element(samples.begin(), samples.end()));
  EXPECT_EQ(h.min(), *std::min_element(samples.begin(), samples.end()));
  EXPECT_EQ(h.Percentile(1.0), h.max());
}

TEST(LatencyHistogram, EmptySmallAndClamped) {
  LatencyHistogram h;
  EXPECT_EQ(h.Percentile(0.99), 0);
  h.Record(5);  // below kSubBuckets: exact
  EXPECT_EQ(h.Percentile(0.5), 5);
  h.Record(-3);  // a clock step backwards counts as 0
  EXPECT_EQ(h.min(), 0);
  h.Record(LatencyHistogram::kMaxValue + 10);
  EXPECT_EQ(h.clamped(), 1);
  EXPECT_EQ(h.max(), LatencyHistogram::kMaxValue);
}

// The closed-loop clients each record their own histogram; merged, they must answer as
// one histogram that saw every sample.
TEST(LatencyHistogram, MergeEqualsRecordingEverySampleInOne) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> dist(13.0, 1.0);  // ~0.4 ms median, long tail
  LatencyHistogram all, parts[3];
  for (int i = 0; i < 3000; ++i) {
    const auto v = static_cast<int64_t>(dist(rng));
    all.Record(v);
    parts[i % 3 == 0 ? 0 : (i % 7 == 0 ? 1 : 2)].Record(v);
  }
  LatencyHistogram merged;
  merged.Merge(LatencyHistogram());  // an empty part changes nothing
  for (const LatencyHistogram& p : parts) merged.Merge(p);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_DOUBLE_EQ(merged.mean(), all.mean());
  for (double q : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0}) EXPECT_EQ(merged.Percentile(q), all.Percentile(q)) << q;
}

TEST(PoissonArrivals, RateAndExponentialGaps) {
  const double rate = 1000;
  PoissonArrivals a(rate, 3);
  std::vector<double> gaps;
  int64_t prev = 0;
  for (int i = 0; i < 100000; ++i) {
    const int64_t t = a.Next();
    ASSERT_GE(t, prev);
    gaps.push_back((t - prev) * 1e-9);
    prev = t;
  }
  double mean = 0;
  for (double g : gaps) mean += g;
  mean /= gaps.size();
  EXPECT_NEAR(mean, 1 / rate, 0.02 / rate);  // 100k draws: sd of the mean is 0.3%
  // Exponential: P(gap > mean) = e^-1, and the coefficient of variation is 1.
  const double above = std::count_if(gaps.begin(), gaps.end(), [&](double g) { return g > mean; });
  EXPECT_NEAR(above / gaps.size(), std::exp(-1.0), 0.01);
  double var = 0;
  for (double g : gaps) var += (g - mean) * (g - mean);
  EXPECT_NEAR(std::sqrt(var / gaps.size()) / mean, 1.0, 0.03);
  // Repeatable from the seed.
  EXPECT_EQ(PoissonArrivals(rate, 3).Next(), PoissonArrivals(rate, 3).Next());
  EXPECT_NE(PoissonArrivals(rate, 3).Next(), PoissonArrivals(rate, 4).Next());
}

RateResult Healthy() {
  RateResult r;
  r.offered_rps = 100;
  r.window_s = 2;
  r.scheduled = 200;
  r.ok = 200;
  r.last_done_s = 2.01;
  r.wall_s = 3;
  r.cpu_s = 0.3;
  for (int i = 0; i < 200; ++i) {
    r.latency_ns.Record(2'000'000 + i * 10'000);  // 2–4 ms
    r.send_lag_ns.Record(50'000);                 // 0.05 ms
  }
  return r;
}

TEST(RateResult, KneeRules) {
  KneeLimits limits;
  limits.slo_ms = 10;
  RateResult r = Healthy();
  EXPECT_NEAR(r.achieved_rps(), 200 / 2.01, 1e-9);
  EXPECT_EQ(KneeReason(r, limits), "");

  RateResult slow = Healthy();
  for (int i = 0; i < 10; ++i) slow.latency_ns.Record(50'000'000);  // 5% at 50 ms
  EXPECT_EQ(KneeReason(slow, limits), "p99_over_slo");

  RateResult late = Healthy();
  late.last_done_s = 2.5;  // the window's work finished 0.5 s late: 80/s of 100 offered
  EXPECT_EQ(KneeReason(late, limits), "throughput");

  RateResult refused = Healthy();
  refused.ok = 190;
  refused.errors["RESOURCE_EXHAUSTED"] = 10;
  EXPECT_EQ(refused.error_count(), 10);
  EXPECT_EQ(KneeReason(refused, limits), "errors");

  RateResult behind = Healthy();
  for (int i = 0; i < 10; ++i) behind.send_lag_ns.Record(5'000'000);
  EXPECT_EQ(KneeReason(behind, limits), "generator_behind");
  // The same 5 ms of lag beside latencies of ~100 ms is not the generator's limit.
  KneeLimits loose = limits;
  loose.slo_ms = 1000;
  for (int i = 0; i < 20; ++i) behind.latency_ns.Record(100'000'000);
  EXPECT_EQ(KneeReason(behind, loose), "");
}

TEST(RateResult, JsonFields) {
  KneeLimits limits;
  const nlohmann::json j = RateJson(Healthy(), limits);
  for (const char* key : {"offered_rps", "scheduled_rps", "achieved_rps", "p50_ms", "p99_ms",
                          "p999_ms", "max_ms", "errors", "send_lag_p99_ms", "generator_behind",
                          "generator_cpu_cores", "knee", "knee_reason"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_LE(j["p50_ms"].get<double>(), j["p99_ms"].get<double>());
  EXPECT_LE(j["p99_ms"].get<double>(), j["p999_ms"].get<double>());
  EXPECT_LE(j["p999_ms"].get<double>(), j["max_ms"].get<double>());
  EXPECT_NEAR(j["generator_cpu_cores"].get<double>(), 0.1, 1e-12);
  EXPECT_FALSE(j["knee"].get<bool>());
  EXPECT_FALSE(TableRow(Healthy(), limits).empty());
}

// The sweep, closed loop and the tick stream write the same latency fields, read from
// any mode by tests/load/run_load_gen.py and bench/serve_latency/latency_table.py.
TEST(LoadReport, LatencyFieldsInEveryMode) {
  LatencyHistogram h;
  for (int64_t v = 1; v <= 1000; ++v) h.Record(v * 1000);
  const nlohmann::json fields = LatencyJson(h);
  EXPECT_EQ(fields.size(), 8u);
  EXPECT_EQ(fields["samples"].get<int64_t>(), 1000);
  EXPECT_DOUBLE_EQ(fields["p50_ms"].get<double>(), Ms(h.Percentile(0.50)));
  EXPECT_DOUBLE_EQ(fields["p999_ms"].get<double>(), Ms(h.Percentile(0.999)));
  EXPECT_DOUBLE_EQ(fields["min_ms"].get<double>(), 0.001);
  EXPECT_DOUBLE_EQ(fields["max_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(fields["mean_ms"].get<double>(), 0.5005);

  RateResult rate;
  rate.latency_ns = h;
  ClosedLoadResult closed;
  closed.latency_ns = h;
  TickStreamResult tick;
  tick.latency_ns = h;
  for (const nlohmann::json& line :
       {RateJson(rate, KneeLimits{}), ClosedLoadJson(closed), TickStreamJson(tick, {})}) {
    for (const auto& [key, value] : fields.items()) EXPECT_EQ(line[key], value) << key;
  }
}

}  // namespace
}  // namespace flashtick::bench
