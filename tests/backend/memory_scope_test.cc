// MemoryScope on the CPU backend: two threads allocating at the same time in their
// own scopes each see only their own bytes (the backend-wide peak sees both); a free
// on another thread credits the scope that allocated; scopes nest; another backend's
// allocations, memory from before the scope, UnscopedAllocations and BorrowedMemory.
#include "kernels/memory_scope.h"

#include <barrier>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/backend.h"

namespace flashtick {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

std::unique_ptr<Backend> Cpu() {
  auto backend = CreateBackend("cpu", {.threads = 1});
  EXPECT_TRUE(backend.ok()) << backend.status();
  return std::move(backend).value();
}

std::shared_ptr<void> Alloc(Backend& backend, int64_t bytes) {
  auto block = backend.Allocate(static_cast<size_t>(bytes));
  EXPECT_TRUE(block.ok()) << block.status();
  return block.ok() ? *block : nullptr;
}

struct Seen {
  int64_t peak = -1, used_while_open = -1;
};

// Each thread: allocate `first`, wait until both threads hold theirs, allocate
// `second` on top, wait again, free both. Its scope's peak is first + second.
TEST(MemoryScope, ConcurrentThreadsEachCountOnlyTheirOwn) {
  auto backend = Cpu();
  auto weights = Alloc(*backend, 7 * kMiB);  // held before any scope: in neither
  backend->ResetPeakMemory();
  std::barrier sync(2);
  auto work = [&](int64_t first, int64_t second, Seen* seen) {
    MemoryScope scope(*backend);
    auto a = Alloc(*backend, first);
    sync.arrive_and_wait();  // both threads hold their first block
    auto b = Alloc(*backend, second);
    sync.arrive_and_wait();  // both hold both
    seen->used_while_open = scope.used_bytes();
    sync.arrive_and_wait();  // neither frees before the other has read its scope
    a.reset();
    b.reset();
    seen->peak = scope.peak_bytes();
    EXPECT_EQ(scope.used_bytes(), 0);
  };
  Seen small, large;
  std::thread t1(work, 1 * kMiB, 2 * kMiB, &small);
  std::thread t2(work, 5 * kMiB, 11 * kMiB, &large);
  t1.join();
  t2.join();
  EXPECT_EQ(small.peak, 3 * kMiB);
  EXPECT_EQ(large.peak, 16 * kMiB);
  EXPECT_EQ(small.used_while_open, 3 * kMiB);
  EXPECT_EQ(large.used_while_open, 16 * kMiB);
  // The backend-wide counters are unchanged in meaning: everything, every thread.
  EXPECT_EQ(backend->Memory().peak_bytes, 7 * kMiB + 3 * kMiB + 16 * kMiB);
  EXPECT_EQ(backend->Memory().used_bytes, 7 * kMiB);
}

TEST(MemoryScope, FreeOnAnotherThreadCreditsTheAllocatingScope) {
  auto backend = Cpu();
  MemoryScope mine(*backend);
  auto block = Alloc(*backend, 4 * kMiB);
  EXPECT_EQ(mine.used_bytes(), 4 * kMiB);
  int64_t theirs_used = -1, theirs_peak = -1;
  std::thread other([&] {
    MemoryScope theirs(*backend);
    block.reset();  // freed here, allocated in `mine`
    theirs_used = theirs.used_bytes();
    theirs_peak = theirs.peak_bytes();
  });
  other.join();
  EXPECT_EQ(mine.used_bytes(), 0);
  EXPECT_EQ(mine.peak_bytes(), 4 * kMiB);
  EXPECT_EQ(theirs_used, 0);  // not -4 MiB: the free is not the other scope's
  EXPECT_EQ(theirs_peak, 0);
}

TEST(MemoryScope, FreeAfterTheScopeClosedIsHarmless) {
  auto backend = Cpu();
  std::shared_ptr<void> kept;
  {
    MemoryScope scope(*backend);
    kept = Alloc(*backend, kMiB);  // outlives the scope (a cache the request grew)
  }
  MemoryScope next(*backend);
  kept.reset();
  EXPECT_EQ(next.used_bytes(), 0);
  EXPECT_EQ(next.peak_bytes(), 0);
}

TEST(MemoryScope, NestedScopesCountInnerAllocationsInBoth) {
  auto backend = Cpu();
  MemoryScope outer(*backend);
  auto a = Alloc(*backend, 2 * kMiB);
  {
    MemoryScope inner(*backend);
    auto b = Alloc(*backend, 3 * kMiB);
    EXPECT_EQ(inner.used_bytes(), 3 * kMiB);
    EXPECT_EQ(outer.used_bytes(), 5 * kMiB);
    a.reset();  // allocated before `inner` opened: only the outer scope is credited
    EXPECT_EQ(inner.used_bytes(), 3 * kMiB);
    EXPECT_EQ(outer.used_bytes(), 3 * kMiB);
    EXPECT_EQ(inner.peak_bytes(), 3 * kMiB);
  }
  EXPECT_EQ(outer.used_bytes(), 0);
  EXPECT_EQ(outer.peak_bytes(), 5 * kMiB);
  // The inner scope closed: the thread's allocations go to the outer one again.
  auto c = Alloc(*backend, kMiB);
  EXPECT_EQ(outer.used_bytes(), kMiB);
}

TEST(MemoryScope, CountsOnlyItsOwnBackend) {
  auto served = Cpu();
  auto other = Cpu();
  MemoryScope scope(*served);
  auto theirs = Alloc(*other, 8 * kMiB);
  auto ours = Alloc(*served, kMiB);
  EXPECT_EQ(scope.peak_bytes(), kMiB);
  // A scope of the other backend, opened inside, takes the other backend's allocations
  // and leaves ours to the enclosing scope.
  MemoryScope other_scope(*other);
  auto more_ours = Alloc(*served, 2 * kMiB);
  auto more_theirs = Alloc(*other, 4 * kMiB);
  EXPECT_EQ(scope.used_bytes(), 3 * kMiB);
  EXPECT_EQ(other_scope.used_bytes(), 4 * kMiB);
}

TEST(MemoryScope, UnscopedAllocationsAndBorrowedMemory) {
  auto backend = Cpu();
  MemoryScope scope(*backend);
  std::shared_ptr<void> cache;
  {
    UnscopedAllocations owner_memory;
    cache = Alloc(*backend, 6 * kMiB);  // the owner's, not this scope's
  }
  EXPECT_EQ(scope.peak_bytes(), 0);
  {
    BorrowedMemory used(*backend, 2 * kMiB);  // the part of the cache this work uses
    EXPECT_EQ(scope.used_bytes(), 2 * kMiB);
  }
  EXPECT_EQ(scope.used_bytes(), 0);
  EXPECT_EQ(scope.peak_bytes(), 2 * kMiB);
  // After UnscopedAllocations closes, allocations count again.
  auto block = Alloc(*backend, kMiB);
  EXPECT_EQ(scope.used_bytes(), kMiB);
}

TEST(MemoryScope, NoScopeNoCounting) {
  auto backend = Cpu();
  auto block = Alloc(*backend, kMiB);  // no scope open: nothing to charge, nothing breaks
  BorrowedMemory borrowed(*backend, kMiB);
  MemoryScope scope(*backend);
  EXPECT_EQ(scope.used_bytes(), 0);
}

}  // namespace
}  // namespace flashtick
