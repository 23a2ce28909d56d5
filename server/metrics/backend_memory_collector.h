// flashtick_gpu_memory_used_bytes and flashtick_gpu_memory_total_bytes, read from
// the serving backend at scrape time, so a dashboard sees the memory the moment it
// asks rather than as of the last request. "used" is what flashtick allocated
// through the backend (its pool: weights, activations, decode caches), which is
// the figure an operator sizes replicas by; "total" is the device's capacity, the
// limit deploy/prometheus/alerts.yml compares "used" with. On the CPU backend the
// same names report the backend's tracked host allocations against physical RAM
// (as flashtick_train_gpu_peak_bytes does), so one dashboard serves both.
#pragma once

#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "kernels/backend.h"

namespace flashtick {

// The two families for one backend's stats, labelled device="<label>". A total of 0
// (unknown) is left out rather than exported as a capacity of zero.
std::vector<prometheus::MetricFamily> BackendMemoryFamilies(const MemoryStats& stats,
                                                            const std::string& device_label);

// The device label of the metrics above: the CUDA ordinal ("0", as DCGM and the
// dashboard's "gpu{{device}}" legend expect) or "cpu".
std::string BackendDeviceLabel(const Backend& backend, int device_index);

class BackendMemoryCollector : public prometheus::Collectable {
 public:
  // `backend` is not owned and must outlive the collector's registration.
  BackendMemoryCollector(const Backend* backend, std::string device_label)
      : backend_(backend), device_label_(std::move(device_label)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Backend* backend_;
  std::string device_label_;
};

}  // namespace flashtick
