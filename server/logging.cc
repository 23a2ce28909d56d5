// Leveled stderr logging (see logging.h). A mutex keeps lines whole when worker
// threads and gRPC callback threads log at the same time.
#include "server/logging.h"

#include <cstdio>
#include <mutex>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace flashtick {

void Log(LogSeverity severity, absl::string_view message) {
  static std::mutex mu;
  char level = severity == LogSeverity::kInfo ? 'I' : severity == LogSeverity::kWarning ? 'W' : 'E';
  const std::string when =
      absl::FormatTime("%m%d %H:%M:%E6S", absl::Now(), absl::LocalTimeZone());
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "%c%s %.*s\n", level, when.c_str(), static_cast<int>(message.size()),
               message.data());
  std::fflush(stderr);
}

}  // namespace flashtick
