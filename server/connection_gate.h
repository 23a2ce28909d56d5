// ConnectionGate: a cap on the TCP connections the gRPC port holds at once, and a
// listener that survives descriptor exhaustion.
//
// gRPC 1.51 (Debian bookworm) has no connection cap (the channel argument
// grpc.max_allowed_incoming_connections came in later releases) and, when its
// accept4() fails with EMFILE, it stops listening for good. flashtickd therefore
// interposes accept4() (the executable's definition wins over libc's for
// libgrpc's call, as with pthread_attr_setstacksize in metrics_endpoint.cc) and,
// for the gRPC port's listening sockets only:
//  - closes a new connection at once when the port already holds `max_connections`
//    (the client sees the connection end before any HTTP/2 frame: UNAVAILABLE);
//  - answers EMFILE/ENFILE by accepting and closing the waiting connection with a
//    descriptor held in reserve, then reports EAGAIN, so gRPC keeps listening.
// Every other accept4() in the process passes through untouched.
//
// Connections are counted by (descriptor, socket inode) pairs: gRPC closes its
// descriptors without telling us, so when the count reaches the cap the pairs are
// checked with fstat() and those whose descriptor no longer names the same socket
// are dropped. TLS, tokens and peer names are unaffected: gRPC still owns the
// listener and every handshake. See docs/security.md.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

class ConnectionGate {
 public:
  // Gates every listening TCP socket of this process bound to `port` (gRPC may
  // bind one per address family). max_connections 0: no cap, only the descriptor
  // guard. FAILED_PRECONDITION when no such listener exists (e.g. a unix socket).
  // `on_refused` (may be empty) is told each refusal's reason ("max_connections" or
  // "descriptors"); it runs on gRPC's accepting thread under the gate's lock.
  using RefusalFn = std::function<void(const std::string& reason)>;
  static absl::StatusOr<std::unique_ptr<ConnectionGate>> Install(int port, int max_connections,
                                                                 RefusalFn on_refused = {});
  ~ConnectionGate();  // stops gating (call before the listener closes)
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  int max_connections() const { return max_connections_; }
  // Connections accepted and still open (pruned now).
  int OpenConnections();
  // Connections closed at accept because the cap was reached / descriptors ran out.
  int64_t refused_at_cap() const;
  int64_t refused_no_descriptors() const;

  // The accept4() interposer's entry point; not for other callers.
  static int Accept4(int fd, sockaddr* addr, socklen_t* len, int flags);

 private:
  ConnectionGate(std::vector<int> listeners, int max_connections, RefusalFn on_refused);
  struct Tracked {
    int fd;
    uint64_t dev;
    uint64_t ino;
  };
  // Under the registry mutex.
  int Admit(int listener, sockaddr* addr, socklen_t* len, int flags);
  void Prune();

  std::vector<int> listeners_;
  const int max_connections_;
  const RefusalFn on_refused_;
  int reserve_fd_ = -1;  // /dev/null, given up for a moment to shed a connection
  std::vector<Tracked> tracked_;
  int64_t refused_at_cap_ = 0;
  int64_t refused_no_descriptors_ = 0;
  int64_t descriptor_errors_ = 0;  // EMFILE/ENFILE seen (logged every 1,000th)
};

// The cap actually applied for a --max-connections value: it also leaves a quarter
// of the open-file limit (at most 256 descriptors) to models, data files, the
// experiment store and /metrics. 0 stays 0 (no cap).
int EffectiveMaxConnections(int requested, uint64_t open_file_limit);

}  // namespace flashtick
