// Whole-file reads and crash-safe writes for checkpoints and configs. An atomic write
// goes to a temporary file in the same directory, is fsync'ed, renamed over the target
// (rename is atomic within a filesystem) and the directory is fsync'ed, so a reader
// sees the old file or the new one, never a torn one, even after a power cut.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

absl::StatusOr<std::string> ReadFileToString(const std::string& path);
// ReadFileToString of a file a command-line flag names; an error keeps its code
// (NOT_FOUND, PERMISSION_DENIED, ...) and names the flag: "--tls-cert: cannot open …".
absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag, const std::string& path);
absl::Status WriteFileAtomic(const std::string& path, absl::string_view contents);
// mkdir -p; OK when the directory already exists.
absl::Status MakeDirs(const std::string& dir);

}  // namespace flashtick
