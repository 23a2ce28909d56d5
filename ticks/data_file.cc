// Confined, bounded data-file reads (see data_file.h).
#include "ticks/data_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace flashtick {
namespace {

constexpr size_t kMaxPathShown = 200;

std::mutex& PolicyMutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

DataFilePolicy& Policy() {
  static DataFilePolicy* p = new DataFilePolicy;
  return *p;
}

// The client's path for a message: bounded and with control bytes escaped, so it
// cannot forge log lines or overflow a status trailer.
std::string Quoted(absl::string_view path) {
  const bool cut = path.size() > kMaxPathShown;
  return absl::StrCat("'", absl::CHexEscape(path.substr(0, kMaxPathShown)), cut ? "...'" : "'");
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) == nullptr) return "";
  return buf;
}

bool Inside(absl::string_view path, absl::string_view root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  return path == root ||
         (path.size() > root.size() && path.substr(0, root.size()) == root &&
          path[root.size()] == '/');
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

void SetDataFilePolicy(const DataFilePolicy& policy) {
  std::lock_guard<std::mutex> lock(PolicyMutex());
  Policy() = policy;
}

DataFilePolicy GetDataFilePolicy() {
  std::lock_guard<std::mutex> lock(PolicyMutex());
  return Policy();
}

absl::StatusOr<std::string> ResolveDataPath(const std::string& path,
                                            const DataFilePolicy& policy) {
  if (path.empty()) return absl::InvalidArgumentError("empty data file path");
  if (path.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("data file path ", Quoted(path),
                                                   " contains a NUL byte"));
  }
  if (!policy.confined) return path;
  if (policy.root.empty()) {
    return absl::PermissionDeniedError(
        "data files are off on this server (it was started without --data-root)");
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") {
      return absl::PermissionDeniedError(absl::StrCat(
          "data file path ", Quoted(path), ": '..' is not allowed; give a path under the "
          "server's data root"));
    }
  }
  const std::string root = RealPath(policy.root);
  if (root.empty()) {
    return absl::FailedPreconditionError("the server's data root cannot be resolved");
  }
  // Decided from the text first, so a refusal says nothing about what exists there.
  const std::string joined = path[0] == '/' ? path : absl::StrCat(root, "/", path);
  if (path[0] == '/' && !Inside(joined, root) && !Inside(joined, policy.root)) {
    return absl::PermissionDeniedError(
        absl::StrCat("data file path ", Quoted(path), " is outside the server's data root"));
  }
  const std::string real = RealPath(joined);
  if (real.empty()) {
    return absl::NotFoundError(
        absl::StrCat("data file ", Quoted(path), " does not exist under the server's data root"));
  }
  if (!Inside(real, root)) {  // a symlink pointing out
    return absl::PermissionDeniedError(
        absl::StrCat("data file path ", Quoted(path), " is outside the server's data root"));
  }
  return real;
}

absl::StatusOr<std::string> ReadDataFile(const std::string& path, const DataFilePolicy& policy) {
  absl::StatusOr<std::string> real = ResolveDataPath(path, policy);
  if (!real.ok()) return real.status();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type check below
  // then refuses it (and devices, sockets, directories) before any read.
  Fd fd(open(real->c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat("cannot open data file ", Quoted(path)));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open data file ", Quoted(path), ": ", std::strerror(err)));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("data file ", Quoted(path), " is not a regular file"));
  }
  const auto too_big = [&](uint64_t size) {
    return absl::ResourceExhaustedError(
        absl::StrCat("data file ", Quoted(path), " is larger than ", policy.max_bytes,
                     " bytes (", size, " read or reported), the most this process reads"));
  };
  if (static_cast<uint64_t>(st.st_size) > policy.max_bytes) return too_big(st.st_size);
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::DataLossError(absl::StrCat("error reading data file ", Quoted(path)));
    }
    // A file that grows while read (or a /proc file that reports size 0) still
    // stops at the cap.
    if (text.size() + static_cast<size_t>(n) > policy.max_bytes) {
      return too_big(text.size() + static_cast<size_t>(n));
    }
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace flashtick
