// Minimal leveled logging for flashtickd and the flashtick CLI: one line per
// event on stderr, "I0102 09:30:00.123456 <message>" (glog-like prefix, so log
// tooling parses it). Abseil 20220623 has no absl/log, hence this helper.
// Never pass tensor data, tokens or credentials to it: callers log shapes,
// names and status messages only.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace flashtick {

enum class LogSeverity { kInfo, kWarning, kError };

inline constexpr size_t kMaxLogLineBytes = 4096;

// What Log writes for `message`: control characters (newline, carriage return,
// escape, ...) as \xNN, cut at kMaxLogLineBytes with the original length noted.
std::string LogLine(absl::string_view message);

// Thread-safe; each call writes one whole line.
void Log(LogSeverity severity, absl::string_view message);

inline void LogInfo(absl::string_view message) { Log(LogSeverity::kInfo, message); }
inline void LogWarning(absl::string_view message) { Log(LogSeverity::kWarning, message); }
inline void LogError(absl::string_view message) { Log(LogSeverity::kError, message); }

}  // namespace flashtick
