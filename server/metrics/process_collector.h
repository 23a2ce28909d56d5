// The standard Prometheus process metrics (https://prometheus.io/docs/instrumenting/
// writing_clientlibs/#process-metrics), which prometheus-cpp does not provide: the
// names and units every client library exports, so the usual dashboards and alerts
// (restarts from process_start_time_seconds, CPU from rate(process_cpu_seconds_total),
// fd exhaustion from open over max) work on flashtickd unchanged. Read from
// /proc/self at scrape time (Linux only; elsewhere the families are empty).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

namespace flashtick {

// One reading of the process's resource use; a field is empty where /proc lacks it.
struct ProcessSample {
  std::optional<double> cpu_seconds;         // user + system time
  std::optional<double> start_time_seconds;  // since the Unix epoch
  std::optional<double> resident_bytes;
  std::optional<double> virtual_bytes;
  std::optional<double> open_fds;
  std::optional<double> max_fds;             // the soft RLIMIT_NOFILE
  std::optional<double> threads;
};

// Parses the text of /proc/<pid>/stat (fields per proc(5)). The command name in
// parentheses may itself hold spaces and ')' so fields are counted from the LAST ')'.
// clock_ticks: sysconf(_SC_CLK_TCK); boot_time_seconds: "btime" of /proc/stat;
// page_bytes: sysconf(_SC_PAGESIZE). Fills cpu, start time, resident, virtual, threads.
void ParseProcStat(const std::string& stat, double clock_ticks, double boot_time_seconds,
                   double page_bytes, ProcessSample* sample);

// Reads /proc/self (stat, fd/) and /proc/stat for this process now.
ProcessSample ReadProcessSample();

// The process_* families from one sample (empty fields are left out).
std::vector<prometheus::MetricFamily> ProcessFamilies(const ProcessSample& sample);

// Register with prometheus::Exposer::RegisterCollectable beside the server's registry.
class ProcessCollector : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    return ProcessFamilies(ReadProcessSample());
  }
};

}  // namespace flashtick
