// File helpers on POSIX calls, with errno turned into messages that name the path.
#include "common/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace flashtick {
namespace {

constexpr char kTempInfix[] = ".tmp.";  // <path>.tmp.<pid>.<random>

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

absl::Status ErrnoError(const std::string& what, const std::string& path) {
  const int e = errno;
  const std::string msg = absl::StrCat(what, " ", path, ": ", std::strerror(e));
  if (e == ENOENT) return absl::NotFoundError(msg);
  if (e == EACCES || e == EPERM) return absl::PermissionDeniedError(msg);
  if (e == ENOSPC) return absl::ResourceExhaustedError(msg);
  return absl::InternalError(msg);
}

// Closes the descriptor on every path out of a function.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return ErrnoError("cannot open", path);
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return ErrnoError("cannot stat", path);
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(f.fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read", path);
    if (n == 0) break;  // the file shrank while we read it
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag, const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return absl::Status(text.status().code(), absl::StrCat(flag, ": ", text.status().message()));
  return text;
}

std::string AtomicWriteTempName(const std::string& path) {
  std::random_device rd;
  return absl::StrCat(path, kTempInfix, ::getpid(), ".", rd());
}

bool ParseAtomicWriteTempName(absl::string_view name, std::string* target, int64_t* pid) {
  const size_t at = name.rfind(kTempInfix);
  if (at == absl::string_view::npos || at == 0) return false;
  const std::vector<absl::string_view> parts =
      absl::StrSplit(name.substr(at + std::strlen(kTempInfix)), '.');
  if (parts.size() != 2 || !AllDigits(parts[0]) || !AllDigits(parts[1]) ||
      !absl::SimpleAtoi(parts[0], pid))
    return false;
  *target = std::string(name.substr(0, at));
  return true;
}

absl::Status WriteFileAtomic(const std::string& path, absl::string_view contents) {
  const std::filesystem::path target(path);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  const std::string tmp = AtomicWriteTempName(path);
  {
    Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
    if (f.fd < 0) return ErrnoError("cannot create", tmp);
    size_t done = 0;
    while (done < contents.size()) {
      const ssize_t n = ::write(f.fd, contents.data() + done, contents.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        absl::Status s = ErrnoError("cannot write", tmp);
        ::unlink(tmp.c_str());
        return s;
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(f.fd) != 0) {
      absl::Status s = ErrnoError("cannot fsync", tmp);
      ::unlink(tmp.c_str());
      return s;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status s = ErrnoError(absl::StrCat("cannot rename ", tmp, " to"), path);
    ::unlink(tmp.c_str());
    return s;
  }
  // Persist the directory entry too, or the rename can be lost in a crash.
  Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd >= 0) ::fsync(d.fd);
  return absl::OkStatus();
}

std::vector<std::string> RemoveInterruptedAtomicWrites(
    const std::string& dir, bool recursive,
    const std::function<bool(const std::string& target)>& is_target) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!recursive) it.disable_recursion_pending();
    if (!it->is_regular_file(ec)) continue;
    std::string target;
    int64_t pid = 0;
    if (!ParseAtomicWriteTempName(it->path().filename().string(), &target, &pid)) continue;
    if (is_target && !is_target(target)) continue;
    // kill(pid, 0) probes without signalling: 0 or EPERM means the process exists.
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;
    std::error_code rm;
    if (std::filesystem::remove(it->path(), rm)) removed.push_back(it->path().string());
  }
  return removed;
}

absl::Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return absl::InternalError(absl::StrCat("cannot create directory ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace flashtick
