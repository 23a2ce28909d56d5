// Connection hygiene against a client that only opens TCP connections: the server
// raises its soft open-file limit to the hard one at start (at a low soft limit,
// 300 idle connects exhausted the descriptors and gRPC stopped accepting for
// good), closes a connection that has not finished the HTTP/2 handshake within
// --handshake-timeout-seconds, closes connections past --max-connections at
// accept, and keeps listening when accept runs out of descriptors
// (server/connection_gate.h). Its own binary: it changes the process's
// RLIMIT_NOFILE.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <thread>
#include <filesystem>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "tests/support/in_process_server.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class ConnectionLimitsTest : public InProcessServerTest {
 protected:
  void StartServer(double handshake_timeout, int metrics_port = -1, int max_connections = 4096) {
    ServerOptions o = BaseOptions();
    o.experiment_dir = "";  // connections only
    o.metrics_port = metrics_port;
    o.shutdown_grace_seconds = 0.5;
    o.handshake_timeout_seconds = handshake_timeout;
    o.max_connections = max_connections;
    InProcessServerTest::StartServer(o);
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
    InProcessServerTest::TearDown();
  }
  bool HealthOk() {
    auto stub = grpc::health::v1::Health::NewStub(Channel());
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    return stub->Check(&ctx, req, &resp).ok();
  }

  // Waits (up to 10 s) until the server has closed `fd`'s connection.
  static bool ClosedByServer(int fd) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 200) != 1) continue;
      char buf[256];
      if (recv(fd, buf, sizeof buf, 0) <= 0) return true;  // EOF or reset
    }
    return false;
  }
  // Waits (up to 10 s) until the gate counts `n` open connections.
  bool OpenConnectionsReach(int n) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      if (server_->connection_gate()->OpenConnections() == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::vector<int> fds_;
};

TEST_F(ConnectionLimitsTest, IdleConnectsDoNotExhaustTheListener) {
  struct rlimit limit;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max < 1024) GTEST_SKIP() << "hard open-file limit " << limit.rlim_max;
  limit.rlim_cur = 256;  // a low soft limit under a higher hard one, as on many hosts
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  StartServer(/*handshake_timeout=*/30);
  struct rlimit after;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, limit.rlim_max);
  for (int i = 0; i < 300; ++i) {
    const int fd = Connect(server_->grpc_port());
    ASSERT_GE(fd, 0) << "connect " << i << " failed";
    fds_.push_back(fd);
  }
  EXPECT_TRUE(HealthOk());
}

TEST_F(ConnectionLimitsTest, ConnectionsPastTheCapAreClosedAndTheServerServesAfter) {
  constexpr int kCap = 8;
  StartServer(/*handshake_timeout=*/30, /*metrics_port=*/-1, /*max_connections=*/kCap);
  ASSERT_NE(server_->connection_gate(), nullptr);
  EXPECT_EQ(server_->connection_gate()->max_connections(), kCap);
  EXPECT_TRUE(HealthOk());  // a channel of its own; closed when HealthOk returns
  ASSERT_TRUE(OpenConnectionsReach(0));
  for (int i = 0; i < kCap; ++i) {
    const int fd = Connect(server_->grpc_port());
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
  }
  ASSERT_TRUE(OpenConnectionsReach(kCap)) << server_->connection_gate()->OpenConnections();
  // Past the cap the kernel still completes the TCP handshake, and the server
  // closes the connection as soon as it accepts it.
  std::vector<int> extra;
  for (int i = 0; i < 3; ++i) {
    const int fd = Connect(server_->grpc_port());
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
    extra.push_back(fd);
  }
  for (int fd : extra) EXPECT_TRUE(ClosedByServer(fd)) << "connection past the cap kept open";
  EXPECT_EQ(server_->connection_gate()->refused_at_cap(), 3);
  EXPECT_EQ(server_->connection_gate()->OpenConnections(), kCap);
  // At the cap a real client is refused too (UNAVAILABLE, not a hang)...
  EXPECT_FALSE(HealthOk());
  // ...and served again once connections go away.
  for (int fd : fds_) close(fd);
  fds_.clear();
  ASSERT_TRUE(OpenConnectionsReach(0)) << server_->connection_gate()->OpenConnections();
  EXPECT_TRUE(HealthOk());
}

TEST(ConnectionCap, LeavesAQuarterOfTheOpenFileLimitAtMost256Free) {
  EXPECT_EQ(EffectiveMaxConnections(4096, uint64_t{1} << 20), 4096);
  EXPECT_EQ(EffectiveMaxConnections(4096, 1024), 1024 - 256);
  EXPECT_EQ(EffectiveMaxConnections(4096, 100), 75);
  EXPECT_EQ(EffectiveMaxConnections(0, 1024), 0);  // no cap
  ServerOptions o;
  o.max_connections = -1;
  const absl::Status bad = o.Validate();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("--max-connections"), absl::string_view::npos) << bad;
}

TEST_F(ConnectionLimitsTest, TheListenerSurvivesRunningOutOfDescriptors) {
  StartServer(/*handshake_timeout=*/30);
  ASSERT_NE(server_->connection_gate(), nullptr);
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  // Leave the process a few spare descriptors, then take them all.
  int open_now = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++open_now;
  }
  struct rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(open_now + 32);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fillers;
  for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
  ASSERT_FALSE(fillers.empty());
  // One descriptor for the client's socket; none for the server's accept.
  close(fillers.back());
  fillers.pop_back();
  const int fd = Connect(server_->grpc_port());
  ASSERT_GE(fd, 0);
  fds_.push_back(fd);
  const bool closed = ClosedByServer(fd);
  for (int f : fillers) close(f);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_TRUE(closed) << "the connection that found no descriptor was left waiting";
  EXPECT_GE(server_->connection_gate()->refused_no_descriptors(), 1);
  // gRPC 1.51 alone stops listening after EMFILE; the gate kept it listening.
  EXPECT_TRUE(HealthOk());
}

TEST_F(ConnectionLimitsTest, AConnectionWithoutAHandshakeIsClosed) {
  StartServer(/*handshake_timeout=*/0.5);
  const int fd = Connect(server_->grpc_port());
  ASSERT_GE(fd, 0);
  fds_.push_back(fd);
  // The server sends its HTTP/2 settings, then closes the connection when the
  // client's preface does not come: the end of the stream well before 10 s.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool closed = false;
  while (!closed && std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 500) != 1) continue;
    char buf[256];
    closed = recv(fd, buf, sizeof buf, 0) <= 0;
  }
  EXPECT_TRUE(closed) << "the server kept a connection without a handshake for 10 s";
  EXPECT_TRUE(HealthOk());
}

TEST_F(ConnectionLimitsTest, SilentScrapersDoNotBlockMetrics) {
  // civetweb served /metrics with 2 threads and waited 30 s for a request: two
  // silent clients held it for everyone. Now 8 threads, and silence ends at 5 s.
  StartServer(/*handshake_timeout=*/10, /*metrics_port=*/0);
  const int port = server_->metrics_port();
  ASSERT_GT(port, 0);
  for (int i = 0; i < 4; ++i) {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  const int fd = Connect(port);
  ASSERT_GE(fd, 0);
  fds_.push_back(fd);
  const std::string get = "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(send(fd, get.data(), get.size(), 0), static_cast<ssize_t>(get.size()));
  std::string answer;
  while (answer.find("\r\n") == std::string::npos &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 200) != 1) continue;
    char buf[512];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(answer.rfind("HTTP/1.", 0), 0u) << answer;
  EXPECT_NE(answer.find(" 200 "), std::string::npos) << answer.substr(0, 80);
  EXPECT_LT(seconds, 2.0);
}

}  // namespace
}  // namespace flashtick
