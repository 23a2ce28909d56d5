// Whole-file reads and crash-safe writes for checkpoints and configs. An atomic write
// goes to a temporary file in the same directory, is fsync'ed, renamed over the target
// (rename is atomic within a filesystem) and the directory is fsync'ed, so a reader
// sees the old file or the new one, never a torn one, even after a power cut.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

absl::StatusOr<std::string> ReadFileToString(const std::string& path);
// ReadFileToString of a file a command-line flag names; an error keeps its code
// (NOT_FOUND, PERMISSION_DENIED, ...) and names the flag: "--tls-cert: cannot open …".
absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag, const std::string& path);
absl::Status WriteFileAtomic(const std::string& path, absl::string_view contents);
// The temporary file WriteFileAtomic(path) writes before its rename:
// "<path>.tmp.<pid>.<random>". A write killed before the rename leaves it behind.
std::string AtomicWriteTempName(const std::string& path);
// Whether the file name `name` has that form; if so, the name it was to be renamed to
// (same directory) and the writer's process id.
bool ParseAtomicWriteTempName(absl::string_view name, std::string* target, int64_t* pid);
// Removes, in `dir` (and below when `recursive`), the temporary files that atomic writes
// left when their process died before the rename (the writer's pid is no longer
// running), and returns their paths. Files of live writers, this process's included,
// are left alone; a pid reused since is taken for live, so such a file waits for a
// later call. `is_target` (optional) limits it to writes of the file names it accepts.
std::vector<std::string> RemoveInterruptedAtomicWrites(
    const std::string& dir, bool recursive = true,
    const std::function<bool(const std::string& target)>& is_target = {});
// mkdir -p; OK when the directory already exists.
absl::Status MakeDirs(const std::string& dir);

}  // namespace flashtick
