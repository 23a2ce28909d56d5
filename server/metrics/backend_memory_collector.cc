// Backend memory gauges at scrape time (see backend_memory_collector.h).
#include "server/metrics/backend_memory_collector.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

prometheus::MetricFamily Gauge(const char* name, const char* help, const std::string& device,
                               double value) {
  prometheus::ClientMetric metric;
  metric.label.push_back({"device", device});
  metric.gauge.value = value;
  return prometheus::MetricFamily{name, help, prometheus::MetricType::Gauge, {metric}};
}

// Physical RAM: the CPU backend's capacity (it reports 0, having no device of its own).
int64_t HostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_bytes > 0 ? static_cast<int64_t>(pages) * page_bytes : 0;
}

}  // namespace

std::vector<prometheus::MetricFamily> BackendMemoryFamilies(const MemoryStats& stats,
                                                            const std::string& device_label) {
  std::vector<prometheus::MetricFamily> families;
  families.push_back(Gauge("flashtick_gpu_memory_used_bytes",
                           "Bytes allocated through the serving backend now (host memory on "
                           "the CPU backend).",
                           device_label, static_cast<double>(stats.used_bytes)));
  if (stats.total_bytes > 0) {
    families.push_back(Gauge("flashtick_gpu_memory_total_bytes",
                             "Capacity of the serving backend's device in bytes (physical RAM "
                             "on the CPU backend).",
                             device_label, static_cast<double>(stats.total_bytes)));
  }
  return families;
}

std::string BackendDeviceLabel(const Backend& backend, int device_index) {
  return backend.device() == DeviceKind::kCuda ? absl::StrCat(device_index) : "cpu";
}

std::vector<prometheus::MetricFamily> BackendMemoryCollector::Collect() const {
  MemoryStats stats = backend_->Memory();
  if (stats.total_bytes == 0 && backend_->device() == DeviceKind::kCpu) {
    stats.total_bytes = HostMemoryBytes();
  }
  return BackendMemoryFamilies(stats, device_label_);
}

}  // namespace flashtick
