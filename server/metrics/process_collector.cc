// Process metrics from /proc (see process_collector.h).
#include "server/metrics/process_collector.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace flashtick {
namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "btime <seconds>" of /proc/stat: when the machine booted, for process start time.
std::optional<double> BootTimeSeconds() {
  std::istringstream in(ReadFile("/proc/stat"));
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && (in >> value)) return value;
    in.ignore(1 << 20, '\n');
  }
  return std::nullopt;
}

std::optional<double> CountOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  double count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the descriptor opendir itself holds while listing
}

prometheus::MetricFamily Family(const char* name, const char* help, prometheus::MetricType type,
                                double value) {
  prometheus::MetricFamily family{name, help, type, {}};
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(metric);
  return family;
}

}  // namespace

void ParseProcStat(const std::string& stat, double clock_ticks, double boot_time_seconds,
                   double page_bytes, ProcessSample* sample) {
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return;
  // After ") ": field 3 (state) onwards, so field k of proc(5) is fields[k - 3].
  const std::vector<std::string> fields =
      absl::StrSplit(stat.substr(close + 1), ' ', absl::SkipEmpty());
  auto field = [&](int k) -> std::optional<double> {
    double value = 0;
    const size_t index = static_cast<size_t>(k - 3);
    if (index >= fields.size() || !absl::SimpleAtod(fields[index], &value)) return std::nullopt;
    return value;
  };
  const auto utime = field(14), stime = field(15), threads = field(20), start = field(22),
             vsize = field(23), rss_pages = field(24);
  if (utime && stime && clock_ticks > 0) sample->cpu_seconds = (*utime + *stime) / clock_ticks;
  if (start && clock_ticks > 0 && boot_time_seconds > 0) {
    sample->start_time_seconds = boot_time_seconds + *start / clock_ticks;
  }
  if (vsize) sample->virtual_bytes = *vsize;
  if (rss_pages) sample->resident_bytes = *rss_pages * page_bytes;
  if (threads) sample->threads = *threads;
}

ProcessSample ReadProcessSample() {
  ProcessSample sample;
  const std::string stat = ReadFile("/proc/self/stat");
  if (!stat.empty()) {
    ParseProcStat(stat, static_cast<double>(sysconf(_SC_CLK_TCK)), BootTimeSeconds().value_or(0),
                  static_cast<double>(sysconf(_SC_PAGESIZE)), &sample);
  }
  sample.open_fds = CountOpenFds();
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    sample.max_fds = static_cast<double>(limit.rlim_cur);
  }
  return sample;
}

std::vector<prometheus::MetricFamily> ProcessFamilies(const ProcessSample& sample) {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  auto add = [&](const std::optional<double>& value, const char* name, const char* help,
                 MetricType type) {
    if (value) families.push_back(Family(name, help, type, *value));
  };
  add(sample.cpu_seconds, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
      MetricType::Counter);
  add(sample.start_time_seconds, "process_start_time_seconds",
      "Start time of the process since unix epoch in seconds.", MetricType::Gauge);
  add(sample.resident_bytes, "process_resident_memory_bytes", "Resident memory size in bytes.",
      MetricType::Gauge);
  add(sample.virtual_bytes, "process_virtual_memory_bytes", "Virtual memory size in bytes.",
      MetricType::Gauge);
  add(sample.open_fds, "process_open_fds", "Number of open file descriptors.", MetricType::Gauge);
  add(sample.max_fds, "process_max_fds", "Maximum number of open file descriptors.",
      MetricType::Gauge);
  add(sample.threads, "process_threads", "Number of OS threads in the process.", MetricType::Gauge);
  return families;
}

}  // namespace flashtick
