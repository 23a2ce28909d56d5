// Reading a data file named by a client (a sweep's data.csv.paths) without
// trusting the name: confinement to an operator-chosen directory, regular files
// only, opened non-blocking (a FIFO or device can neither wedge nor flood the
// reader), a byte cap, and messages that name the path as given but never show
// the file's contents. docs/security.md lists the server flags that set the policy.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace flashtick {

struct DataFilePolicy {
  // When confined, a path must resolve (symlinks followed) inside `root`; relative
  // paths are taken from `root`; ".." is refused; an empty root refuses every path.
  // Unconfined is for local tools reading their own user's files.
  bool confined = false;
  std::string root;
  uint64_t max_bytes = uint64_t{1} << 30;
};

// The policy ReadTextFile applies. Process-wide: flashtickd sets it once at start
// (--data-root, --max-data-file-mb) before any sweep runs; the default is unconfined.
void SetDataFilePolicy(const DataFilePolicy& policy);
DataFilePolicy GetDataFilePolicy();

// The real path `path` names under `policy`, or PERMISSION_DENIED (outside the
// root; decided from the text alone for paths that are not lexically under it, so
// refusals reveal nothing about what exists there), NOT_FOUND, INVALID_ARGUMENT.
absl::StatusOr<std::string> ResolveDataPath(const std::string& path,
                                            const DataFilePolicy& policy);

// Resolves `path`, opens it O_NONBLOCK, requires a regular file of at most
// policy.max_bytes (RESOURCE_EXHAUSTED past it), and reads it whole.
absl::StatusOr<std::string> ReadDataFile(const std::string& path, const DataFilePolicy& policy);

}  // namespace flashtick
