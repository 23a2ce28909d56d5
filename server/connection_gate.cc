// ConnectionGate (see connection_gate.h).
#include "server/connection_gate.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/logging.h"

namespace flashtick {
namespace {

using Accept4Fn = int (*)(int, sockaddr*, socklen_t*, int);

Accept4Fn RealAccept4() {
  static const Accept4Fn real = reinterpret_cast<Accept4Fn>(dlsym(RTLD_NEXT, "accept4"));
  return real;
}

// Guards the list of gates and every gate's state. accept4() on a listening
// socket is non-blocking in gRPC, and connections arrive far slower than this
// lock turns over.
std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<ConnectionGate*>& Registry() {
  static std::vector<ConnectionGate*> gates;
  return gates;
}

// The process's listening TCP sockets bound to `port`, found among its open
// descriptors (gRPC does not hand its listeners out).
std::vector<int> ListeningSocketsOnPort(int port) {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const int dir_fd = dirfd(dir);
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dir_fd) continue;
    int listening = 0;
    socklen_t size = sizeof listening;
    if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 ||
        listening == 0) {
      continue;
    }
    sockaddr_storage address{};
    socklen_t address_size = sizeof address;
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&address), &address_size) !=
        0) {
      continue;
    }
    int bound = -1;
    if (address.ss_family == AF_INET) {
      bound = ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
    } else if (address.ss_family == AF_INET6) {
      bound = ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
    }
    if (bound == port) fds.push_back(static_cast<int>(fd));
  }
  closedir(dir);
  return fds;
}

}  // namespace

int EffectiveMaxConnections(int requested, uint64_t open_file_limit) {
  if (requested <= 0) return 0;
  const uint64_t kept = std::min<uint64_t>(256, open_file_limit / 4);
  const uint64_t room = open_file_limit > kept ? open_file_limit - kept : 1;
  return static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(requested, room)));
}

absl::StatusOr<std::unique_ptr<ConnectionGate>> ConnectionGate::Install(int port,
                                                                        int max_connections,
                                                                        RefusalFn on_refused) {
  if (RealAccept4() == nullptr) return absl::InternalError("accept4 not found in libc");
  std::vector<int> listeners = ListeningSocketsOnPort(port);
  if (listeners.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no listening TCP socket on port ", port, " to cap connections on"));
  }
  std::unique_ptr<ConnectionGate> gate(new ConnectionGate(std::move(listeners), max_connections, std::move(on_refused)));
  std::lock_guard<std::mutex> lock(RegistryMutex());
  // A listener of a server that is gone may have left its descriptor number to
  // this one: the newest gate owns it.
  for (ConnectionGate* other : Registry()) {
    for (int fd : gate->listeners_) {
      other->listeners_.erase(std::remove(other->listeners_.begin(), other->listeners_.end(), fd),
                              other->listeners_.end());
    }
  }
  Registry().push_back(gate.get());
  return gate;
}

ConnectionGate::ConnectionGate(std::vector<int> listeners, int max_connections,
                               RefusalFn on_refused)
    : listeners_(std::move(listeners)),
      max_connections_(max_connections),
      on_refused_(std::move(on_refused)) {
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

ConnectionGate::~ConnectionGate() {
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    auto& gates = Registry();
    gates.erase(std::remove(gates.begin(), gates.end(), this), gates.end());
  }
  if (reserve_fd_ >= 0) close(reserve_fd_);
}

int ConnectionGate::OpenConnections() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Prune();
  return static_cast<int>(tracked_.size());
}

int64_t ConnectionGate::refused_at_cap() const {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  return refused_at_cap_;
}

int64_t ConnectionGate::refused_no_descriptors() const {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  return refused_no_descriptors_;
}

void ConnectionGate::Prune() {
  tracked_.erase(std::remove_if(tracked_.begin(), tracked_.end(),
                                [](const Tracked& t) {
                                  struct stat st;
                                  return fstat(t.fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
                                         static_cast<uint64_t>(st.st_dev) != t.dev ||
                                         static_cast<uint64_t>(st.st_ino) != t.ino;
                                }),
                 tracked_.end());
}

int ConnectionGate::Accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  const Accept4Fn real = RealAccept4();
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  std::lock_guard<std::mutex> lock(RegistryMutex());
  for (ConnectionGate* gate : Registry()) {
    if (std::find(gate->listeners_.begin(), gate->listeners_.end(), fd) != gate->listeners_.end()) {
      return gate->Admit(fd, addr, len, flags);
    }
  }
  return real(fd, addr, len, flags);
}

int ConnectionGate::Admit(int listener, sockaddr* addr, socklen_t* len, int flags) {
  const Accept4Fn real = RealAccept4();
  const socklen_t len_in = len != nullptr ? *len : 0;
  for (;;) {
    if (len != nullptr) *len = len_in;
    const int fd = real(listener, addr, len, flags);
    if (fd < 0) {
      if (errno != EMFILE && errno != ENFILE) return -1;  // EAGAIN and the rest: gRPC's
      // Out of descriptors. gRPC 1.51 would stop listening on this error; instead
      // shed the waiting connection with the reserve descriptor (the client sees
      // it closed rather than hanging in the backlog) and say EAGAIN, which gRPC
      // answers by waiting for the next connection.
      const int saved = errno;
      bool shed = false;
      if (reserve_fd_ >= 0) {
        close(reserve_fd_);
        const int waiting = real(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (waiting >= 0) {
          close(waiting);
          shed = true;
        }
        reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
      }
      if (shed) {
        ++refused_no_descriptors_;
        if (on_refused_) on_refused_("descriptors");
      }
      if (descriptor_errors_++ % 1000 == 0) {
        LogWarning(absl::StrCat("gRPC port out of file descriptors (",
                                saved == EMFILE ? "EMFILE" : "ENFILE", "): ",
                                refused_no_descriptors_,
                                " connection(s) closed at accept so far; raise the open-file "
                                "limit or lower --max-connections"));
      }
      if (shed && reserve_fd_ >= 0) continue;  // more may wait; the loop ends at EAGAIN
      errno = EAGAIN;
      return -1;
    }
    if (max_connections_ > 0) {
      if (static_cast<int>(tracked_.size()) >= max_connections_) Prune();
      if (static_cast<int>(tracked_.size()) >= max_connections_) {
        close(fd);
        if (on_refused_) on_refused_("max_connections");
        if (++refused_at_cap_ % 1000 == 1) {
          LogWarning(absl::StrCat("gRPC port at --max-connections ", max_connections_, ": ",
                                  refused_at_cap_, " connection(s) closed at accept so far"));
        }
        continue;
      }
    }
    struct stat st;
    if (max_connections_ > 0 && fstat(fd, &st) == 0) {
      // A descriptor number reused by a newer connection replaces the stale pair.
      tracked_.erase(std::remove_if(tracked_.begin(), tracked_.end(),
                                    [fd](const Tracked& t) { return t.fd == fd; }),
                     tracked_.end());
      tracked_.push_back(
          {fd, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)});
    }
    return fd;
  }
}

}  // namespace flashtick

// Interposes libc's accept4 for the whole process (libgrpc's call binds to the
// executable's definition); only the gated gRPC listeners are treated specially.
extern "C" int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  return flashtick::ConnectionGate::Accept4(fd, addr, len, flags);
}
