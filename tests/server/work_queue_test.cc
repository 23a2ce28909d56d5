// WorkQueue: jobs run in order on the workers; beyond max_pending, Submit is
// RESOURCE_EXHAUSTED at once (the job is not run); after Shutdown it is
// UNAVAILABLE; Shutdown runs what was already queued.
#include "server/work_queue.h"

#include <atomic>
#include <chrono>
#include <future>
#include <vector>

#include <gtest/gtest.h>

namespace flashtick {
namespace {

TEST(WorkQueue, BoundedAndDrainsOnShutdown) {
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> ran{0};
  std::atomic<int64_t> last_length{-1};
  WorkQueue queue(1, 2, [&](int64_t length) { last_length = length; });
  std::promise<void> started;
  ASSERT_TRUE(queue.Submit([&] {
    started.set_value();
    gate.wait();
    ++ran;
  }).ok());
  started.get_future().wait();  // the worker holds job 1; the queue is empty
  ASSERT_TRUE(queue.Submit([&] { ++ran; }).ok());
  ASSERT_TRUE(queue.Submit([&] { ++ran; }).ok());
  EXPECT_EQ(last_length.load(), 3);  // 2 queued + 1 running
  absl::Status full = queue.Submit([&] { ran += 100; });
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(full.message()).find("--max-queue"), std::string::npos);
  release.set_value();
  queue.Shutdown();
  EXPECT_EQ(ran.load(), 3);
  EXPECT_EQ(last_length.load(), 0);
  EXPECT_EQ(queue.Submit([] {}).code(), absl::StatusCode::kUnavailable);
}

TEST(WorkQueue, RunsJobsInOrderOnOneWorker) {
  std::vector<int> order;
  {
    WorkQueue queue(1, 100);
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(queue.Submit([&order, i] { order.push_back(i); }).ok());
    queue.Shutdown();
  }
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
}

}  // namespace
}  // namespace flashtick
