// socket_io: poll()-bounded TCP helpers (research/parallel/socket_io.h).
#include "research/parallel/socket_io.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace flashtick::net {
namespace {

// poll() waits in slices of this, so a stop or abort flag is seen promptly.
constexpr int kSliceMs = 50;

absl::Status Errno(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

int MsUntil(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, kSliceMs));
}

double SecondsOf(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

absl::Status Closed(absl::string_view peer) {
  return absl::UnavailableError(absl::StrCat(peer, " closed its connection"));
}

bool IsReset(int err) { return err == ECONNRESET || err == EPIPE || err == ENOTCONN; }

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Waits for `events` on fd until the deadline; OK when ready (or on an error or hang-up
// condition, which the following send/recv reports).
absl::Status WaitFor(int fd, short events, Clock::time_point deadline, absl::string_view peer,
                     absl::string_view doing, const std::atomic<bool>* stop) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    if (stop != nullptr && stop->load()) return absl::CancelledError("stopped");
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, MsUntil(deadline));
    if (n < 0 && errno != EINTR) return Errno("poll");
    if (n > 0) return absl::OkStatus();
    if (Clock::now() >= deadline)
      return absl::DeadlineExceededError(
          absl::StrCat(doing, " ", peer, ": nothing for ", SecondsOf(Clock::now() - start), " s"));
  }
}

}  // namespace

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    Close();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void Socket::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

void Socket::Shutdown() {
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
}

absl::StatusOr<Socket> ListenTcp(int port, int backlog) {
  if (port < 0 || port > 65535) return absl::InvalidArgumentError(absl::StrCat("bad port ", port));
  Socket s(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Errno("socket");
  int one = 1;
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return Errno(absl::StrCat("bind to port ", port));
  if (listen(s.fd(), backlog) != 0) return Errno("listen");
  return s;
}

absl::StatusOr<int> LocalPort(const Socket& s) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return Errno("getsockname");
  return static_cast<int>(ntohs(addr.sin_port));
}

absl::StatusOr<std::string> LocalAddress(const Socket& s) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return Errno("getsockname");
  char buf[INET_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET, &addr.sin_addr, buf, sizeof(buf)) == nullptr) return Errno("inet_ntop");
  return std::string(buf);
}

absl::StatusOr<Socket> ConnectTcp(const std::string& host, int port, Clock::time_point deadline,
                                  absl::string_view peer) {
  if (port < 1 || port > 65535)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot connect to ", peer, ": bad port ", port));
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  std::string last = "no attempt";
  for (;;) {
    addrinfo* res = nullptr;
    const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (rc == 0) {
      Socket s(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (!s.valid()) {
        freeaddrinfo(res);
        return Errno("socket");
      }
      const int c = connect(s.fd(), res->ai_addr, res->ai_addrlen);
      freeaddrinfo(res);
      if (c == 0) {
        SetNoDelay(s.fd());
        return s;
      }
      last = std::strerror(errno);
    } else {
      last = gai_strerror(rc);  // the name may not resolve yet (a pod still starting)
    }
    if (Clock::now() >= deadline)
      return absl::DeadlineExceededError(
          absl::StrCat("cannot connect to ", peer, " at ", host, ":", port, ": ", last));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

absl::StatusOr<Socket> AcceptTcp(const Socket& listener, Clock::time_point deadline,
                                 const std::atomic<bool>* stop) {
  for (;;) {
    absl::Status w = WaitFor(listener.fd(), POLLIN, deadline, "a connection", "waiting for", stop);
    if (!w.ok()) return w;
    Socket s(accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (s.valid()) {
      SetNoDelay(s.fd());
      return s;
    }
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) return Errno("accept");
  }
}

absl::Status SendAll(const Socket& s, const void* data, size_t n, Clock::time_point deadline,
                     absl::string_view peer) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    absl::Status w = WaitFor(s.fd(), POLLOUT, deadline, peer, "sending to", nullptr);
    if (!w.ok()) return w;
    const ssize_t k = send(s.fd(), p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (IsReset(errno)) return Closed(peer);
      return Errno(absl::StrCat("send to ", peer));
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return absl::OkStatus();
}

absl::Status RecvAll(const Socket& s, void* data, size_t n, Clock::time_point deadline,
                     absl::string_view peer) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    absl::Status w = WaitFor(s.fd(), POLLIN, deadline, peer, "waiting for", nullptr);
    if (!w.ok()) return w;
    const ssize_t k = recv(s.fd(), p, n, MSG_DONTWAIT);
    if (k == 0) return Closed(peer);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (IsReset(errno)) return Closed(peer);
      return Errno(absl::StrCat("recv from ", peer));
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return absl::OkStatus();
}

absl::Status WaitReadable(const Socket& s, Clock::time_point deadline,
                          const std::atomic<bool>* stop) {
  return WaitFor(s.fd(), POLLIN, deadline, "the peer", "waiting for", stop);
}

absl::Status ExchangeAll(std::vector<PeerTransfer>& transfers, Clock::duration stall_timeout,
                         const std::atomic<bool>* abort) {
  std::vector<pollfd> fds(transfers.size());
  Clock::time_point last_progress = Clock::now();
  for (;;) {
    bool pending = false;
    for (size_t i = 0; i < transfers.size(); ++i) {
      const PeerTransfer& t = transfers[i];
      fds[i] = {
          t.socket->fd(),
          static_cast<short>((t.send_bytes > 0 ? POLLOUT : 0) | (t.recv_bytes > 0 ? POLLIN : 0)),
          0};
      if (fds[i].events == 0) fds[i].fd = -1;  // done with this peer: poll ignores it
      pending |= fds[i].events != 0;
    }
    if (!pending) return absl::OkStatus();
    if (abort != nullptr && abort->load())
      return absl::AbortedError("all-reduce group aborted: another replica failed");
    const int n = poll(fds.data(), fds.size(), MsUntil(last_progress + stall_timeout));
    if (n < 0 && errno != EINTR) return Errno("poll");
    bool progressed = false;
    for (size_t i = 0; n > 0 && i < transfers.size(); ++i) {
      PeerTransfer& t = transfers[i];
      if (fds[i].revents == 0) continue;
      if (fds[i].revents & POLLNVAL)
        return absl::InternalError(absl::StrCat("the connection to ", t.peer, " is closed here"));
      if (t.recv_bytes > 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t k = recv(t.socket->fd(), t.recv, t.recv_bytes, MSG_DONTWAIT);
        if (k == 0) return Closed(t.peer);
        if (k < 0 && IsReset(errno)) return Closed(t.peer);
        if (k < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
          return Errno(absl::StrCat("recv from ", t.peer));
        if (k > 0) {
          t.recv += k;
          t.recv_bytes -= static_cast<size_t>(k);
          progressed = true;
        }
      }
      if (t.send_bytes > 0 && (fds[i].revents & (POLLOUT | POLLHUP | POLLERR))) {
        const ssize_t k = send(t.socket->fd(), t.send, t.send_bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && IsReset(errno)) return Closed(t.peer);
        if (k < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
          return Errno(absl::StrCat("send to ", t.peer));
        if (k > 0) {
          t.send += k;
          t.send_bytes -= static_cast<size_t>(k);
          progressed = true;
        }
      }
    }
    if (progressed) {
      last_progress = Clock::now();
    } else if (Clock::now() - last_progress >= stall_timeout) {
      std::vector<std::string> stalled;
      for (const PeerTransfer& t : transfers)
        if (t.recv_bytes > 0 || t.send_bytes > 0) stalled.push_back(t.peer);
      return absl::DeadlineExceededError(absl::StrCat("all-reduce stalled: no data moved for ",
                                                      SecondsOf(stall_timeout), " s (waiting on ",
                                                      absl::StrJoin(stalled, ", "), ")"));
    }
  }
}

}  // namespace flashtick::net
