// TcpReduceGroup (research/parallel/tcp_reduce_group.h): 2 and 4 ranks on threads of
// one process, each with its own store client and mesh sockets as separate processes
// would have, must give every rank HostReduceGroup's sums bit for bit (fp32 and fp64,
// counts smaller than, equal to and much larger than the world size, repeated calls);
// a closed peer gives Unavailable, a stalled one DeadlineExceeded, Abort Aborted, and
// ranks that disagree on the call an error, never a hang.
#include "research/parallel/tcp_reduce_group.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "research/parallel/host_reduce_group.h"
#include "research/parallel/tcp_store.h"

namespace flashtick {
namespace {

using std::chrono::steady_clock;

struct Mesh {
  std::vector<std::unique_ptr<TcpStore>> stores;
  std::vector<std::unique_ptr<TcpReduceGroup>> groups;
};

// W ranks: stores (rank 0 serving) and meshes, set up concurrently as processes would.
Mesh MakeMesh(int W, double timeout) {
  Mesh m;
  m.stores.resize(W);
  m.groups.resize(W);
  TcpStoreOptions o;
  o.world_size = W;
  auto s0 = TcpStore::Create(o);
  EXPECT_TRUE(s0.ok()) << s0.status();
  m.stores[0] = *std::move(s0);
  for (int r = 1; r < W; ++r) {
    o.rank = r;
    o.port = m.stores[0]->port();
    m.stores[r] = *TcpStore::Create(o);
  }
  std::vector<std::thread> th;
  for (int r = 0; r < W; ++r)
    th.emplace_back([&, r] {
      auto g = TcpReduceGroup::Create(*m.stores[r], timeout);
      EXPECT_TRUE(g.ok()) << g.status();
      if (g.ok()) m.groups[r] = *std::move(g);
    });
  for (auto& t : th) t.join();
  return m;
}

template <typename T>
std::vector<std::vector<T>> RandomBuffers(int W, int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> d(0.0, 1.0);
  std::vector<std::vector<T>> b(W, std::vector<T>(count));
  for (auto& v : b)
    for (T& x : v) x = static_cast<T>(d(gen) * std::exp(3 * d(gen)));  // wide magnitudes
  return b;
}

// Sums `bufs` in place on W threads through `group`.
template <typename T>
void SumOnThreads(ReduceGroup& group, std::vector<std::vector<T>>& bufs) {
  const int W = static_cast<int>(bufs.size());
  const DType dtype = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  std::vector<std::thread> th;
  for (int r = 0; r < W; ++r)
    th.emplace_back([&, r] {
      absl::Status s = group.AllReduceSum(r, bufs[r].data(), bufs[r].size(), dtype);
      EXPECT_TRUE(s.ok()) << "rank " << r << ": " << s;
    });
  for (auto& t : th) t.join();
}

// The TCP group's sums on every rank must equal HostReduceGroup's bytes.
template <typename T>
void ExpectEqualsHostGroup(Mesh& m, int64_t count, uint32_t seed) {
  const int W = static_cast<int>(m.groups.size());
  auto host = RandomBuffers<T>(W, count, seed);
  auto tcp = host;
  HostReduceGroup reference(W);
  SumOnThreads(reference, host);
  const DType dtype = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  std::vector<std::thread> th;
  for (int r = 0; r < W; ++r)
    th.emplace_back([&, r] {
      absl::Status s = m.groups[r]->AllReduceSum(r, tcp[r].data(), count, dtype);
      EXPECT_TRUE(s.ok()) << "rank " << r << ": " << s;
    });
  for (auto& t : th) t.join();
  for (int r = 0; r < W; ++r)
    EXPECT_EQ(std::memcmp(tcp[r].data(), host[0].data(), count * sizeof(T)), 0)
        << "W=" << W << " count=" << count << " rank " << r << " differs from HostReduceGroup";
}

TEST(TcpReduceGroup, EqualsHostReduceGroupBitForBit) {
  for (int W : {2, 4}) {
    Mesh m = MakeMesh(W, 10);
    ASSERT_EQ(m.groups.size(), static_cast<size_t>(W));
    for (auto& g : m.groups) ASSERT_NE(g, nullptr);
    uint32_t seed = 1;
    for (int64_t count : {1, 3, 4, 1000, 300007}) {  // 300007 fp64: MiBs through the sockets
      ExpectEqualsHostGroup<float>(m, count, seed++);
      ExpectEqualsHostGroup<double>(m, count, seed++);
    }
  }
}

TEST(TcpReduceGroup, WorldOfOneIsANoOp) {
  Mesh m = MakeMesh(1, 10);
  std::vector<float> v = {1.5f, -2.f};
  ASSERT_TRUE(m.groups[0]->AllReduceSum(0, v.data(), 2, DType::kF32).ok());
  EXPECT_EQ(v, (std::vector<float>{1.5f, -2.f}));
}

TEST(TcpReduceGroup, ClosedPeerGivesUnavailable) {
  Mesh m = MakeMesh(2, 30);
  m.groups[1].reset();  // rank 1 exits: its sockets close
  m.stores[1].reset();
  std::vector<double> v(100, 1.0);
  const auto t0 = steady_clock::now();
  absl::Status s = m.groups[0]->AllReduceSum(0, v.data(), 100, DType::kF64);
  EXPECT_LT(steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_EQ(s.message(), "rank 1 closed its connection");
}

TEST(TcpReduceGroup, StalledPeerGivesDeadlineExceeded) {
  Mesh m = MakeMesh(3, 0.3);  // rank 2 is alive but never calls
  std::vector<std::vector<float>> v(2, std::vector<float>(10, 1.f));
  std::vector<absl::Status> st(2);
  const auto t0 = steady_clock::now();
  std::thread a([&] { st[0] = m.groups[0]->AllReduceSum(0, v[0].data(), 10, DType::kF32); });
  std::thread b([&] { st[1] = m.groups[1]->AllReduceSum(1, v[1].data(), 10, DType::kF32); });
  a.join();
  b.join();
  EXPECT_LT(steady_clock::now() - t0, std::chrono::seconds(5));
  for (const auto& s : st) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_NE(s.message().find("rank 2"), std::string::npos) << s;
  }
}

TEST(TcpReduceGroup, AbortWakesAWaitingRank) {
  Mesh m = MakeMesh(2, 30);
  std::vector<float> v(10, 1.f);
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    m.groups[0]->Abort();
  });
  const auto t0 = steady_clock::now();
  absl::Status s = m.groups[0]->AllReduceSum(0, v.data(), 10, DType::kF32);
  aborter.join();
  EXPECT_LT(steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_EQ(m.groups[0]->AllReduceSum(0, v.data(), 10, DType::kF32).code(),
            absl::StatusCode::kAborted);
}

TEST(TcpReduceGroup, RanksThatDisagreeFailInsteadOfSumming) {
  Mesh m = MakeMesh(2, 5);
  std::vector<float> a(10, 1.f), b(11, 1.f);
  std::vector<absl::Status> st(2);
  std::thread t0([&] { st[0] = m.groups[0]->AllReduceSum(0, a.data(), 10, DType::kF32); });
  std::thread t1([&] { st[1] = m.groups[1]->AllReduceSum(1, b.data(), 11, DType::kF32); });
  t0.join();
  t1.join();
  for (const auto& s : st) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_NE(s.message().find("diverged"), std::string::npos) << s;
  }
  EXPECT_EQ(m.groups[0]->AllReduceSum(1, a.data(), 10, DType::kF32).code(),
            absl::StatusCode::kInvalidArgument);  // not this process's rank
}

}  // namespace
}  // namespace flashtick
