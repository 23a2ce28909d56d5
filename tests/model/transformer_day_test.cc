// A full 23,400-step day through the default (tiny) model on the CPU backend, in its
// own process so getrusage's peak RSS reflects this forward alone. Asserts O(T)
// memory: the growth of peak RSS and the backend's allocation high-water mark are far
// below one T×T fp32 matrix (23,400² × 4 B = 2.19 GB), which a quadratic attention
// would need for a single head. Prints the time and memory figures.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "model/transformer.h"

namespace flashtick {
namespace {

int64_t PeakRssBytes() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return int64_t{ru.ru_maxrss} * 1024;  // Linux reports kilobytes
}

// User + system CPU time of the process (all threads).
double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

TEST(TransformerDay, FullDayForwardIsLinearInMemory) {
  constexpr int64_t T = 23400;  // 09:30-16:00 at one step a second (ticks/features.h)
  constexpr double kTxTFp32 = double(T) * T * 4;
  auto be = std::move(CreateBackend("cpu")).value();
  const ModelConfig config;  // the default tiny model
  auto m = std::move(Transformer::InitRandom(config, 1, be.get())).value();
  std::vector<float> ticks(T * config.features);
  for (int64_t i = 0; i < T * config.features; ++i) ticks[i] = std::sin(0.001 * i) + 0.1 * ((i * 7919) % 13);
  const int64_t rss_before = PeakRssBytes();
  be->ResetPeakMemory();
  const int64_t backend_before = be->Memory().used_bytes;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  auto probs = m->Predict(ticks, 1, T, false);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu_secs = CpuSeconds() - cpu0;
  if (probs.status().code() == absl::StatusCode::kUnimplemented) GTEST_SKIP() << probs.status();
  ASSERT_TRUE(probs.ok()) << probs.status();
  const int64_t rss_growth = PeakRssBytes() - rss_before;
  const int64_t backend_peak = be->Memory().peak_bytes - backend_before;
  std::printf("day forward: T=%lld C=%d L=%d H=%d: %.2f s wall, %.2f s CPU; peak RSS %.1f MB "
              "(growth %.1f MB), backend peak %.1f MB (one TxT fp32 matrix: %.0f MB)\n",
              (long long)T, config.width, config.layers, config.heads, secs, cpu_secs,
              PeakRssBytes() / 1e6, rss_growth / 1e6, backend_peak / 1e6, kTxTFp32 / 1e6);
  RecordProperty("seconds", std::to_string(secs));
  RecordProperty("peak_rss_growth_bytes", std::to_string(rss_growth));
  RecordProperty("backend_peak_bytes", std::to_string(backend_peak));
  ASSERT_EQ(probs->size(), size_t(T * config.classes));
  for (int64_t t = 0; t < T; t += 997) {
    double s = 0;
    for (int k = 0; k < config.classes; ++k) s += (*probs)[t * config.classes + k];
    ASSERT_NEAR(s, 1.0, 1e-5);
  }
  EXPECT_LT(double(rss_growth), kTxTFp32 / 8);   // < 274 MB
  EXPECT_LT(double(backend_peak), kTxTFp32 / 16);  // < 137 MB of activations
}

}  // namespace
}  // namespace flashtick
