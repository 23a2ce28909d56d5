// TcpStore (research/parallel/tcp_store.h): set/get/add/check between ranks, barriers,
// a rendezvous timeout that names the missing rank, the server's limits on sizes and
// connections, and a store killed mid-call giving Unavailable instead of a hang.
#include "research/parallel/tcp_store.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

using std::chrono::steady_clock;

TcpStoreOptions Options(int rank, int world, int port, double timeout = 10) {
  TcpStoreOptions o;
  o.rank = rank;
  o.world_size = world;
  o.port = port;
  o.timeout_seconds = timeout;
  return o;
}

// Rank 0 (with the server) and ranks 1..world−1 connected to it.
std::vector<std::unique_ptr<TcpStore>> Job(int world, double timeout = 10,
                                           const TcpStoreLimits& limits = {}) {
  std::vector<std::unique_ptr<TcpStore>> stores;
  TcpStoreOptions o0 = Options(0, world, 0, timeout);
  o0.limits = limits;
  auto s0 = TcpStore::Create(o0);
  EXPECT_TRUE(s0.ok()) << s0.status();
  if (!s0.ok()) return stores;
  stores.push_back(*std::move(s0));
  for (int r = 1; r < world; ++r) {
    auto s = TcpStore::Create(Options(r, world, stores[0]->port(), timeout));
    EXPECT_TRUE(s.ok()) << s.status();
    if (s.ok()) stores.push_back(*std::move(s));
  }
  return stores;
}

TEST(TcpStore, SetGetCheckAddBetweenRanks) {
  auto job = Job(3);
  ASSERT_EQ(job.size(), 3u);
  ASSERT_TRUE(job[1]->Set("k", std::string("v\0w", 3)).ok());
  auto v = job[2]->Get("k");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, std::string("v\0w", 3));  // binary-safe
  EXPECT_TRUE(*job[0]->Check("k"));
  EXPECT_FALSE(*job[0]->Check("absent"));
  // Get waits for a key set later by another rank.
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(job[0]->Set("late", "here").ok());
  });
  auto got = job[1]->Get("late");
  late.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "here");
  // Add: a counter shared by every rank, concurrent.
  std::vector<std::thread> adders;
  for (int r = 0; r < 3; ++r)
    adders.emplace_back([&, r] {
      for (int i = 0; i < 50; ++i) ASSERT_TRUE(job[r]->Add("count", 2).ok());
    });
  for (auto& t : adders) t.join();
  EXPECT_EQ(*job[0]->Add("count", 0), 300);
  EXPECT_EQ(*job[1]->Add("count", -1), 299);
  EXPECT_FALSE(job[1]->Add("k", 1).ok());  // not an integer
}

TEST(TcpStore, GetTimesOut) {
  auto job = Job(1);
  ASSERT_EQ(job.size(), 1u);
  const auto t0 = steady_clock::now();
  auto v = job[0]->Get("never", 0.2);
  EXPECT_EQ(v.status().code(), absl::StatusCode::kDeadlineExceeded) << v.status();
  EXPECT_LT(steady_clock::now() - t0, std::chrono::seconds(3));
}

TEST(TcpStore, BarrierReleasesEveryRank) {
  auto job = Job(4);
  ASSERT_EQ(job.size(), 4u);
  std::vector<absl::Status> st(4);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 4; ++r)
    ranks.emplace_back([&, r] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30 * r));  // arrive apart
      st[r] = job[r]->Barrier("b1");
      if (st[r].ok()) st[r] = job[r]->Barrier("b2");
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(st[r].ok()) << "rank " << r << ": " << st[r];
}

TEST(TcpStore, RendezvousTimeoutNamesTheMissingRank) {
  auto s0 = TcpStore::Create(Options(0, 4, 0, 0.5));
  ASSERT_TRUE(s0.ok()) << s0.status();
  std::vector<std::unique_ptr<TcpStore>> others;
  for (int r : {1, 3}) others.push_back(*TcpStore::Create(Options(r, 4, (*s0)->port(), 0.5)));
  std::vector<absl::Status> st(2);
  std::thread a([&] { st[0] = others[0]->Barrier("rendezvous"); });
  std::thread b([&] { st[1] = others[1]->Barrier("rendezvous"); });
  const auto t0 = steady_clock::now();
  absl::Status s = (*s0)->Barrier("rendezvous");
  a.join();
  b.join();
  EXPECT_LT(steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_EQ(s.message(), "rendezvous timed out after 0.5 s: 3 of 4 ranks joined (missing: 2)");
  for (const auto& x : st) EXPECT_EQ(x.code(), absl::StatusCode::kDeadlineExceeded) << x;
}

TEST(TcpStore, ConnectTimesOutWithoutAServer) {
  auto listener = net::ListenTcp(0, 1);  // a port we own, then free again
  ASSERT_TRUE(listener.ok());
  const int port = *net::LocalPort(*listener);
  listener->Close();
  auto s = TcpStore::Create(Options(1, 2, port, 0.3));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDeadlineExceeded) << s.status();
  EXPECT_NE(s.status().message().find("rank 0"), std::string::npos) << s.status();
}

TEST(TcpStore, RefusesOversizeKeysAndValues) {
  TcpStoreLimits limits;
  limits.max_value_bytes = 1024;
  limits.max_key_bytes = 16;
  auto job = Job(1, 10, limits);
  ASSERT_EQ(job.size(), 1u);
  EXPECT_TRUE(job[0]->Set("ok", std::string(1024, 'x')).ok());
  absl::Status big = job[0]->Set("big", std::string(1025, 'x'));
  EXPECT_EQ(big.code(), absl::StatusCode::kInvalidArgument) << big;
  EXPECT_EQ(job[0]->Set(std::string(17, 'k'), "v").code(), absl::StatusCode::kInvalidArgument);
  // A raw client claiming a 1 GiB value is refused by the server before it reads it.
  auto raw = net::ConnectTcp("127.0.0.1", job[0]->port(),
                             steady_clock::now() + std::chrono::seconds(5), "the store");
  ASSERT_TRUE(raw.ok()) << raw.status();
  const unsigned char req[9] = {1, 1, 0, 0, 0, 0, 0, 0, 0x40};  // Set, 1-byte key, 2^30 bytes
  ASSERT_TRUE(net::SendAll(*raw, req, sizeof(req), steady_clock::now() + std::chrono::seconds(5),
                           "the store")
                  .ok());
  unsigned char head[5] = {};
  ASSERT_TRUE(net::RecvAll(*raw, head, sizeof(head), steady_clock::now() + std::chrono::seconds(5),
                           "the store")
                  .ok());
  EXPECT_EQ(head[0], 2);              // refused
  EXPECT_TRUE(*job[0]->Check("ok"));  // the store itself is fine
}

TEST(TcpStore, LimitsConnections) {
  TcpStoreLimits limits;
  limits.max_connections = 2;
  auto job = Job(2, 2, limits);  // rank 0's and rank 1's connections: the limit
  ASSERT_EQ(job.size(), 2u);
  auto extra = TcpStore::Create(Options(1, 2, job[0]->port(), 2));
  ASSERT_TRUE(extra.ok()) << extra.status();  // the kernel accepts; the server closes it
  absl::Status s = (*extra)->Set("x", "y");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("closed its connection"), std::string::npos) << s;
  EXPECT_TRUE(job[1]->Set("x", "y").ok());  // the members are unaffected
}

TEST(TcpStore, StoreKilledMidCallGivesUnavailable) {
  // The store in a child process, SIGKILLed while rank 1 waits in Get.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto server = TcpStoreServer::Start(0);
    const int port = server.ok() ? (*server)->port() : -1;
    if (write(fds[1], &port, sizeof(port)) != sizeof(port)) _exit(2);
    for (;;) pause();
  }
  close(fds[1]);
  int port = -1;
  ASSERT_EQ(read(fds[0], &port, sizeof(port)), static_cast<ssize_t>(sizeof(port)));
  close(fds[0]);
  ASSERT_GT(port, 0);
  auto store = TcpStore::Create(Options(1, 2, port, 30));
  ASSERT_TRUE(store.ok()) << store.status();
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kill(child, SIGKILL);
  });
  const auto t0 = steady_clock::now();
  auto v = (*store)->Get("never");  // would wait 30 s
  killer.join();
  waitpid(child, nullptr, 0);
  EXPECT_LT(steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(v.status().code(), absl::StatusCode::kUnavailable) << v.status();
  EXPECT_NE(v.status().message().find("rank 0 (the store"), std::string::npos) << v.status();
  EXPECT_NE(v.status().message().find("closed its connection"), std::string::npos) << v.status();
}

}  // namespace
}  // namespace flashtick
