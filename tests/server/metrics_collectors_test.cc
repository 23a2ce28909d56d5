// The scrape-time collectors (server/metrics/process_collector.h,
// backend_memory_collector.h) and the per-request peak-memory histogram: parsing of
// /proc/<pid>/stat, the families and their exposition text, and live readings of
// this very process and of a CPU backend as it allocates.
#include <unistd.h>

#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "kernels/backend.h"
#include "server/metrics/backend_memory_collector.h"
#include "server/metrics/metrics.h"
#include "server/metrics/process_collector.h"

namespace flashtick {
namespace {

std::string Exposition(const std::vector<prometheus::MetricFamily>& families) {
  return prometheus::TextSerializer().Serialize(families);
}

const prometheus::MetricFamily* Find(const std::vector<prometheus::MetricFamily>& families,
                                     const std::string& name) {
  for (const auto& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

// A stat line whose command name holds spaces and a ')' (proc(5): fields are
// counted from the last ')'); utime 250, stime 150 ticks, 7 threads, started at
// tick 4200, vsize 123456789 bytes, rss 1000 pages.
TEST(ProcessCollector, ParsesStatPastAnAwkwardCommandName) {
  const std::string stat =
      "4242 (flash tick) d) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 150 0 0 20 0 7 0 4200 "
      "123456789 1000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0";
  ProcessSample sample;
  ParseProcStat(stat, /*clock_ticks=*/100, /*boot_time_seconds=*/1.7e9, /*page_bytes=*/4096,
                &sample);
  ASSERT_TRUE(sample.cpu_seconds.has_value());
  EXPECT_DOUBLE_EQ(*sample.cpu_seconds, 4.0);
  EXPECT_DOUBLE_EQ(*sample.start_time_seconds, 1.7e9 + 42.0);
  EXPECT_DOUBLE_EQ(*sample.virtual_bytes, 123456789.0);
  EXPECT_DOUBLE_EQ(*sample.resident_bytes, 1000.0 * 4096);
  EXPECT_DOUBLE_EQ(*sample.threads, 7.0);
}

TEST(ProcessCollector, TruncatedStatLeavesFieldsEmpty) {
  ProcessSample sample;
  ParseProcStat("12 (x) S 1 2 3", 100, 1.7e9, 4096, &sample);
  EXPECT_FALSE(sample.cpu_seconds.has_value());
  EXPECT_FALSE(sample.resident_bytes.has_value());
  ParseProcStat("no parenthesis at all", 100, 1.7e9, 4096, &sample);
  EXPECT_FALSE(sample.start_time_seconds.has_value());
  EXPECT_TRUE(ProcessFamilies(sample).empty());
}

TEST(ProcessCollector, ReadsThisProcess) {
  const ProcessSample sample = ReadProcessSample();
  ASSERT_TRUE(sample.resident_bytes && sample.open_fds && sample.start_time_seconds &&
              sample.cpu_seconds && sample.threads);
  EXPECT_GT(*sample.resident_bytes, 1 << 20);
  EXPECT_GE(*sample.open_fds, 3);  // stdin, stdout, stderr at least
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(*sample.start_time_seconds, now + 2);  // btime has one-second resolution
  EXPECT_GT(*sample.start_time_seconds, now - 24 * 3600);
  EXPECT_GE(*sample.cpu_seconds, 0);
  EXPECT_GE(*sample.threads, 1);

  // One more open descriptor is counted as one more.
  const int fd = dup(1);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(*ReadProcessSample().open_fds, *sample.open_fds + 1);
  close(fd);
}

TEST(ProcessCollector, ExportsTheStandardNamesAndTypes) {
  const auto families = ProcessCollector().Collect();
  const auto* cpu = Find(families, "process_cpu_seconds_total");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->type, prometheus::MetricType::Counter);
  for (const char* name : {"process_resident_memory_bytes", "process_virtual_memory_bytes",
                           "process_start_time_seconds", "process_open_fds", "process_max_fds"}) {
    const auto* family = Find(families, name);
    ASSERT_NE(family, nullptr) << name;
    EXPECT_EQ(family->type, prometheus::MetricType::Gauge) << name;
    EXPECT_GT(family->metric.at(0).gauge.value, 0) << name;
  }
  const std::string text = Exposition(families);
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE process_open_fds gauge"), std::string::npos) << text;
}

TEST(BackendMemoryCollector, FollowsTheBackendsAllocations) {
  auto backend = CreateBackend("cpu");
  ASSERT_TRUE(backend.ok()) << backend.status();
  BackendMemoryCollector collector(backend->get(), BackendDeviceLabel(**backend, 0));
  auto used = [&] {
    const auto families = collector.Collect();
    const auto* family = Find(families, "flashtick_gpu_memory_used_bytes");
    EXPECT_NE(family, nullptr);
    EXPECT_EQ(family->metric.at(0).label.at(0).value, "cpu");
    return family->metric.at(0).gauge.value;
  };
  const double before = used();
  {
    auto block = (*backend)->Allocate(8 << 20);
    ASSERT_TRUE(block.ok()) << block.status();
    EXPECT_EQ(used(), before + (8 << 20));
  }
  EXPECT_EQ(used(), before);
  // The CPU backend knows no capacity; the collector reports physical RAM.
  const auto families = collector.Collect();
  const auto* total = Find(families, "flashtick_gpu_memory_total_bytes");
  ASSERT_NE(total, nullptr);
  EXPECT_GT(total->metric.at(0).gauge.value, 64 << 20);
}

TEST(BackendMemoryCollector, LeavesOutAnUnknownCapacity) {
  const auto families = BackendMemoryFamilies(MemoryStats{100, 200, 0}, "0");
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].name, "flashtick_gpu_memory_used_bytes");
  const auto both = BackendMemoryFamilies(MemoryStats{100, 200, 1000}, "0");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_NE(Exposition(both).find("flashtick_gpu_memory_total_bytes{device=\"0\"} 1000"),
            std::string::npos)
      << Exposition(both);
}

TEST(Metrics, RequestPeakMemoryIsAHistogramByModelAndMethod) {
  Metrics metrics;
  metrics.RecordRequestPeakMemory("m", "ModelInfer", 3 << 20);
  metrics.RecordRequestPeakMemory("m", "ModelInfer", 5 << 20);
  const std::string text = Exposition(metrics.registry()->Collect());
  EXPECT_NE(text.find("# TYPE flashtick_request_gpu_peak_bytes histogram"), std::string::npos);
  EXPECT_NE(text.find("flashtick_request_gpu_peak_bytes_count{method=\"ModelInfer\",model=\"m\"} 2"),
            std::string::npos)
      << text;
  // 3 MiB falls in the 4 MiB bucket, 5 MiB in the 8 MiB one.
  EXPECT_NE(text.find("flashtick_request_gpu_peak_bytes_bucket{method=\"ModelInfer\",model=\"m\","
                      "le=\"4194304\"} 1"),
            std::string::npos)
      << text;
}

TEST(Metrics, TrainStepSecondsSplitsPlainFromRefreshSteps) {
  Metrics metrics;
  metrics.RecordTrainStep("e", "n512-s0", 1.0, 0.002, 1 << 20);
  metrics.RecordTrainStep("e", "n512-s0", 1.0, 0.003, 1 << 20, /*hessian_refreshed=*/false);
  metrics.RecordTrainStep("e", "n512-s0", 1.0, 0.8, 1 << 20, /*hessian_refreshed=*/true);
  std::string text = Exposition(metrics.registry()->Collect());
  EXPECT_NE(text.find("flashtick_train_step_seconds_count{arm=\"n512-s0\",experiment=\"e\",kind=\"plain\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("flashtick_train_step_seconds_count{arm=\"n512-s0\",experiment=\"e\",kind=\"refresh\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("flashtick_train_steps_total{arm=\"n512-s0\",experiment=\"e\"} 3"), std::string::npos)
      << text;
  metrics.RetireArm("e", "n512-s0");  // both kinds go with the arm
  text = Exposition(metrics.registry()->Collect());
  EXPECT_EQ(text.find("flashtick_train_step_seconds_count{"), std::string::npos) << text;
}

}  // namespace
}  // namespace flashtick
