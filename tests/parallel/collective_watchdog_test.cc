// CollectiveWatchdog with fake probes: a collective pending past the timeout aborts once
// with DeadlineExceeded; an async communicator error aborts with Unavailable; one that
// completes in time, or nothing launched, never aborts.
#include "research/parallel/collective_watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace flashtick {
namespace {

using std::chrono::milliseconds;

struct Fake {
  std::atomic<bool> pending{false};
  std::atomic<bool> broken{false};
  std::atomic<int> aborts{0};

  CollectiveProbes Probes() {
    CollectiveProbes p;
    p.pending = [this] { return pending.load(); };
    p.async_error = [this] {
      return broken.load() ? absl::InternalError("remote process exited") : absl::OkStatus();
    };
    p.abort = [this] { aborts.fetch_add(1); };
    return p;
  }
};

// Waits up to 5 s for the watchdog to fire; true when it did.
bool WaitFired(const CollectiveWatchdog& w) {
  for (int i = 0; i < 500 && !w.fired(); ++i) std::this_thread::sleep_for(milliseconds(10));
  return w.fired();
}

TEST(CollectiveWatchdogTest, APendingCollectivePastTheTimeoutAbortsOnce) {
  Fake fake;
  CollectiveWatchdog w(fake.Probes(), "NCCL rank 1 of 2", /*timeout_seconds=*/0.2,
                       /*poll_seconds=*/0.01);
  fake.pending = true;
  w.Launched();
  ASSERT_TRUE(WaitFired(w));
  std::this_thread::sleep_for(milliseconds(50));  // no second abort
  EXPECT_EQ(fake.aborts.load(), 1);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(w.status().message().find("NCCL rank 1 of 2"), std::string::npos) << w.status();
  EXPECT_NE(w.status().message().find("no progress"), std::string::npos) << w.status();
}

TEST(CollectiveWatchdogTest, AnAsyncErrorAbortsWithUnavailable) {
  Fake fake;
  CollectiveWatchdog w(fake.Probes(), "NCCL rank 0 of 2", /*timeout_seconds=*/60,
                       /*poll_seconds=*/0.01);
  fake.broken = true;
  ASSERT_TRUE(WaitFired(w));
  EXPECT_EQ(fake.aborts.load(), 1);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(w.status().message().find("remote process exited"), std::string::npos) << w.status();
}

TEST(CollectiveWatchdogTest, CollectivesThatCompleteNeverAbort) {
  Fake fake;
  {
    CollectiveWatchdog w(fake.Probes(), "NCCL rank 0 of 2", /*timeout_seconds=*/0.1,
                         /*poll_seconds=*/0.01);
    // Pending for less than the timeout each time, then complete; then long idle.
    for (int i = 0; i < 5; ++i) {
      w.Launched();
      fake.pending = true;
      std::this_thread::sleep_for(milliseconds(30));
      fake.pending = false;
    }
    std::this_thread::sleep_for(milliseconds(300));  // idle: nothing pending
    EXPECT_FALSE(w.fired());
    EXPECT_TRUE(w.status().ok());
  }  // the destructor stops the thread without aborting
  EXPECT_EQ(fake.aborts.load(), 0);
}

TEST(CollectiveWatchdogTest, NothingLaunchedNeverTimesOut) {
  Fake fake;
  fake.pending = true;  // e.g. an event never recorded
  CollectiveWatchdog w(fake.Probes(), "NCCL rank 0 of 2", /*timeout_seconds=*/0.05,
                       /*poll_seconds=*/0.01);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_FALSE(w.fired());
  EXPECT_EQ(fake.aborts.load(), 0);
}

}  // namespace
}  // namespace flashtick
