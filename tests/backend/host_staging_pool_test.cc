// HostStagingPool (kernels/host_staging_pool.h) on the CPU backend, whose staging is
// plain host memory: the pool's books are the same on every backend. Checked: a
// returned buffer is lent again (the smallest that fits), new buffers are powers of two
// from 64 KiB, the cap refuses only what the lent buffers leave no room for and drops
// free buffers to make room, a moved lease returns its buffer once, and threads
// borrowing at once never share a buffer.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/backend.h"
#include "kernels/host_staging_pool.h"

namespace flashtick {
namespace {

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;

std::unique_ptr<Backend> Cpu() {
  auto be = CreateBackend("cpu", {});
  EXPECT_TRUE(be.ok()) << be.status();
  return *std::move(be);
}

TEST(HostStagingPool, ReturnedBuffersAreLentAgain) {
  auto be = Cpu();
  HostStagingPool pool(be.get(), 64 * kMiB);
  void* first = nullptr;
  {
    auto a = pool.Acquire(100 * kKiB);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->capacity(), 128 * kKiB);  // the next power of two
    first = a->data();
    std::memset(a->data(), 0x5a, 100 * kKiB);  // the whole asked size is writable
    EXPECT_EQ(pool.free_buffers(), 0u);
  }
  EXPECT_EQ(pool.free_buffers(), 1u);
  EXPECT_EQ(pool.held_bytes(), 128 * kKiB);
  auto again = pool.Acquire(120 * kKiB);  // fits in the returned one: no new memory
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(pool.held_bytes(), 128 * kKiB);
  auto small = pool.Acquire(1);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->capacity(), 64 * kKiB);  // the floor
  EXPECT_EQ(pool.held_bytes(), 192 * kKiB);
}

TEST(HostStagingPool, TheSmallestFreeBufferThatFitsIsLent) {
  auto be = Cpu();
  HostStagingPool pool(be.get(), 64 * kMiB);
  void* big_ptr = nullptr;
  void* mid_ptr = nullptr;
  {
    auto big = pool.Acquire(4 * kMiB);
    auto mid = pool.Acquire(1 * kMiB);
    ASSERT_TRUE(big.ok() && mid.ok());
    big_ptr = big->data();
    mid_ptr = mid->data();
  }
  auto a = pool.Acquire(700 * kKiB);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->data(), mid_ptr);
  auto b = pool.Acquire(700 * kKiB);  // the 1 MiB one is lent: the 4 MiB one
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data(), big_ptr);
}

TEST(HostStagingPool, TheCapRefusesWhatLentBuffersLeaveNoRoomFor) {
  auto be = Cpu();
  HostStagingPool pool(be.get(), 1 * kMiB);
  auto a = pool.Acquire(600 * kKiB);  // 1 MiB rounded: the whole cap
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->capacity(), 1 * kMiB);
  auto b = pool.Acquire(1);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted) << b.status();
  auto too_big = pool.Acquire(2 * kMiB);
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(pool.held_bytes(), 1 * kMiB);  // refusals hold nothing
  a = HostStagingPool::Lease();  // returned
  auto c = pool.Acquire(1);
  ASSERT_TRUE(c.ok());  // the free 1 MiB buffer fits
  EXPECT_EQ(c->capacity(), 1 * kMiB);
}

TEST(HostStagingPool, FreeBuffersTooSmallAreDroppedToMakeRoom) {
  auto be = Cpu();
  HostStagingPool pool(be.get(), 1 * kMiB);
  { auto a = pool.Acquire(256 * kKiB); auto b = pool.Acquire(512 * kKiB); }
  EXPECT_EQ(pool.free_buffers(), 2u);
  EXPECT_EQ(pool.held_bytes(), 768 * kKiB);
  // 600 KiB fits in neither; a 1 MiB buffer needs both dropped.
  auto c = pool.Acquire(600 * kKiB);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(pool.free_buffers(), 0u);
  EXPECT_EQ(pool.held_bytes(), 1 * kMiB);
}

TEST(HostStagingPool, AMovedLeaseReturnsItsBufferOnce) {
  auto be = Cpu();
  HostStagingPool pool(be.get(), 4 * kMiB);
  {
    auto a = pool.Acquire(64 * kKiB);
    ASSERT_TRUE(a.ok());
    HostStagingPool::Lease moved = *std::move(a);
    HostStagingPool::Lease other;
    other = std::move(moved);
    EXPECT_EQ(moved.data(), nullptr);
    EXPECT_NE(other.data(), nullptr);
  }
  EXPECT_EQ(pool.free_buffers(), 1u);
  EXPECT_EQ(pool.held_bytes(), 64 * kKiB);
}

TEST(HostStagingPool, ConcurrentBorrowersNeverShareABuffer) {
  auto be = Cpu();
  HostStagingPool pool(be.get(), 64 * kMiB);
  std::atomic<int> clashes{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const size_t bytes = (64 + 32 * ((t + i) % 5)) * kKiB;
        auto lease = pool.Acquire(bytes);
        if (!lease.ok()) {
          ++refused;
          continue;
        }
        auto* p = static_cast<unsigned char*>(lease->data());
        std::memset(p, t, bytes);
        std::this_thread::yield();
        for (size_t k = 0; k < bytes; k += 4096) clashes += p[k] != static_cast<unsigned char>(t);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(clashes.load(), 0);
  EXPECT_EQ(refused.load(), 0);
  EXPECT_LE(pool.held_bytes(), 64 * kMiB);
}

}  // namespace
}  // namespace flashtick
