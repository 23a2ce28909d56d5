// Leveled stderr logging (see logging.h). A mutex keeps lines whole when worker
// threads and gRPC callback threads log at the same time.
#include "server/logging.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace flashtick {

std::string LogLine(absl::string_view message) {
  // Messages quote client strings (model names, paths, ids): a newline or carriage
  // return in one must not start a forged log line, nor escape codes reach a
  // terminal, nor a megabyte-long name make one line a megabyte.
  std::string out;
  out.reserve(std::min(message.size(), kMaxLogLineBytes) + 16);
  for (const char c : message) {
    if (out.size() >= kMaxLogLineBytes) {
      absl::StrAppend(&out, "... (", message.size(), " bytes)");
      break;
    }
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

void Log(LogSeverity severity, absl::string_view raw) {
  const std::string message = LogLine(raw);
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
