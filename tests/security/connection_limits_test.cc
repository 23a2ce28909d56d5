// Connection hygiene against a client that only opens TCP connections: the server
// raises its soft open-file limit to the hard one at start (at a low soft limit,
// 300 idle connects exhausted the descriptors and gRPC stopped accepting for
// good), and closes a connection that has not finished the HTTP/2 handshake
// within --handshake-timeout-seconds. Its own binary: it changes the process's
// RLIMIT_NOFILE.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "server/flashtick_server.h"
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

class ConnectionLimitsTest : public ::testing::Test {
 protected:
  void StartServer(double handshake_timeout, int metrics_port = -1) {
    root_ = ::testing::TempDir() + "/connection_limits_" + std::to_string(getpid());
    fs::create_directories(root_ + "/models");
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.metrics_port = metrics_port;
    o.model_repository = root_ + "/models";
    o.device = "cpu";
    o.threads = 1;
    o.shutdown_grace_seconds = 0.5;
    o.handshake_timeout_seconds = handshake_timeout;
    auto s = FlashtickServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
    if (server_) server_->Shutdown();
    fs::remove_all(root_);
  }
  bool HealthOk() {
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->grpc_port()),
                                       grpc::InsecureChannelCredentials());
    auto stub = grpc::health::v1::Health::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    return stub->Check(&ctx, req, &resp).ok();
  }

  std::string root_;
  std::unique_ptr<FlashtickServer> server_;
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
