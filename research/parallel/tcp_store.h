// TcpStore: the rendezvous key-value store of a multi-process job, after PyTorch's c10d
// TCPStore (docs/multi_gpu.md, multi-process). Rank 0 runs the server (TcpStoreServer)
// on MASTER_ADDR:MASTER_PORT; every rank, rank 0 included, is a client over one TCP
// connection, connecting with retries until the rendezvous timeout. Ranks publish
// what the others need (an all-reduce mesh's addresses, NCCL's unique id) and meet at
// barriers. Wire format (both directions length-prefixed, little-endian):
//   request  [u8 op][u32 key bytes][u32 value bytes][key][value]
//   response [u8 status][u32 payload bytes][payload]
// The server refuses keys over max_key_bytes, values over max_value_bytes, more than
// max_keys keys and more than max_connections connections, so a stray client cannot
// grow it without bound. Every read has a deadline: no call can hang.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "research/parallel/socket_io.h"

namespace flashtick {

struct TcpStoreLimits {
  uint32_t max_key_bytes = 1024;
  uint32_t max_value_bytes = 1 << 20;
  int64_t max_keys = 4096;
  int max_connections = 64;
  // A request must arrive whole within this once its first byte has.
  double frame_timeout_seconds = 10;
};

// The server: a thread accepting connections and one thread per connection.
class TcpStoreServer {
 public:
  // Listens on every IPv4 interface at `port` (0: the kernel picks; see port()).
  static absl::StatusOr<std::unique_ptr<TcpStoreServer>> Start(int port,
                                                               const TcpStoreLimits& limits = {});
  ~TcpStoreServer();  // stops the threads and closes every connection

  int port() const { return port_; }
  int connections() const { return active_.load(); }

 private:
  struct Connection {
    net::Socket socket;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  explicit TcpStoreServer(const TcpStoreLimits& limits) : limits_(limits) {}
  void AcceptLoop();
  void Serve(Connection* c);
  // One request → its response (status byte + payload).
  absl::Status Handle(uint8_t op, const std::string& key, const std::string& value, uint8_t* status,
                      std::string* payload);

  const TcpStoreLimits limits_;
  net::Socket listener_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> active_{0};
  std::thread acceptor_;
  std::mutex conns_mu_;
  std::list<std::unique_ptr<Connection>> conns_;
  std::mutex mu_;
  std::map<std::string, std::string> data_;
};

struct TcpStoreOptions {
  std::string host = "127.0.0.1";  // MASTER_ADDR
  int port = 0;                    // MASTER_PORT; 0 on rank 0 picks one (port())
  int rank = 0;
  int world_size = 1;
  double timeout_seconds = 30;  // connecting, Get's wait, barriers, one reply
  TcpStoreLimits limits;        // of the server (rank 0)
};

// A client of the job's store; on rank 0 it also owns the server.
class TcpStore {
 public:
  static absl::StatusOr<std::unique_ptr<TcpStore>> Create(const TcpStoreOptions& options);

  int rank() const { return options_.rank; }
  int world_size() const { return options_.world_size; }
  int port() const { return port_; }  // the server's (rank 0: the one it picked)
  double timeout_seconds() const { return options_.timeout_seconds; }
  // The connected socket (its local address is this host's interface toward rank 0).
  const net::Socket& socket() const { return socket_; }

  absl::Status Set(absl::string_view key, absl::string_view value);
  // Waits until `key` is set; DeadlineExceeded after the timeout.
  absl::StatusOr<std::string> Get(absl::string_view key);
  absl::StatusOr<std::string> Get(absl::string_view key, double timeout_seconds);
  // Whether `key` is set now (no wait).
  absl::StatusOr<bool> Check(absl::string_view key);
  // Adds `delta` to the integer counter `key` (0 when unset); returns the new value.
  absl::StatusOr<int64_t> Add(absl::string_view key, int64_t delta);
  // Every rank calls it with the same `name`; returns when all world_size ranks have.
  // DeadlineExceeded names the ranks missing: "<name> timed out after 30 s: 3 of 4
  // ranks joined (missing: 2)". A name is used once per job.
  absl::Status Barrier(absl::string_view name);

 private:
  explicit TcpStore(const TcpStoreOptions& options) : options_(options) {}
  // One request/response round trip; after an I/O error every later call fails with it.
  absl::StatusOr<std::string> Call(uint8_t op, absl::string_view key, absl::string_view value,
                                   bool* found);
  absl::StatusOr<std::string> RoundTrip(uint8_t op, absl::string_view key, absl::string_view value,
                                        bool* found);

  TcpStoreOptions options_;
  std::unique_ptr<TcpStoreServer> server_;  // rank 0 only; destroyed after socket_
  net::Socket socket_;
  int port_ = 0;
  std::string peer_;     // "rank 0 (the store at host:port)"
  std::mutex mu_;        // one request at a time on the connection
  absl::Status broken_;  // the connection's first I/O error, if any
};

}  // namespace flashtick
