// socket_io: the POSIX TCP plumbing under the multi-process rendezvous store
// (tcp_store.h) and the CPU all-reduce between processes (tcp_reduce_group.h). Every
// wait is a poll() with a deadline, so nothing here can hang: a peer that closes or
// resets its connection gives Unavailable ("rank 2 closed its connection"), one that
// stops sending gives DeadlineExceeded. IPv4 only (docs/multi_gpu.md, multi-process).
// Sends use MSG_NOSIGNAL, so a dead peer never raises SIGPIPE.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick::net {

using Clock = std::chrono::steady_clock;

// Seconds as a steady-clock duration (fractions allowed).
inline Clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// An owned socket descriptor, closed on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { Close(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Close();
  // Ends both directions now (a thread blocked on the socket wakes), keeping the fd.
  void Shutdown();

 private:
  int fd_ = -1;
};

// A listening socket on every IPv4 interface; port 0 lets the kernel pick one.
absl::StatusOr<Socket> ListenTcp(int port, int backlog);
// The port a socket is bound to, and the dotted IPv4 address of its local end (for a
// connected socket: the interface that reaches the peer).
absl::StatusOr<int> LocalPort(const Socket& s);
absl::StatusOr<std::string> LocalAddress(const Socket& s);

// Connects to host:port, retrying refused or unreachable attempts until `deadline`
// (the peer may not listen yet). `peer` names it in errors.
absl::StatusOr<Socket> ConnectTcp(const std::string& host, int port, Clock::time_point deadline,
                                  absl::string_view peer);
// Accepts one connection, or DeadlineExceeded at `deadline`; `stop` (if given) set
// by another thread ends the wait with Cancelled.
absl::StatusOr<Socket> AcceptTcp(const Socket& listener, Clock::time_point deadline,
                                 const std::atomic<bool>* stop = nullptr);

// Sends or receives exactly n bytes before `deadline`.
absl::Status SendAll(const Socket& s, const void* data, size_t n, Clock::time_point deadline,
                     absl::string_view peer);
absl::Status RecvAll(const Socket& s, void* data, size_t n, Clock::time_point deadline,
                     absl::string_view peer);
// Waits until `s` is readable (data or a close), DeadlineExceeded at `deadline`,
// Cancelled when `stop` is set. Used to wait for the next request of an idle client.
absl::Status WaitReadable(const Socket& s, Clock::time_point deadline,
                          const std::atomic<bool>* stop = nullptr);

// One peer's part of an ExchangeAll: bytes to send to it and bytes to receive from it.
struct PeerTransfer {
  const Socket* socket = nullptr;
  std::string peer;  // "rank 2", for errors
  const char* send = nullptr;
  size_t send_bytes = 0;
  char* recv = nullptr;
  size_t recv_bytes = 0;
};

// Sends and receives every transfer at once (one poll() over all peers, so two
// ranks sending to each other never wait on each other's full socket buffers).
// DeadlineExceeded, naming the ranks still owing data, when no byte moved for
// `stall_timeout`; Unavailable when a peer closes; Aborted when `abort` is set.
absl::Status ExchangeAll(std::vector<PeerTransfer>& transfers, Clock::duration stall_timeout,
                         const std::atomic<bool>* abort = nullptr);

}  // namespace flashtick::net
