// StreamAdmission (server/stream/stream_admission.h) against fake streams: the
// server and per-client counts, release on ticket destruction, the memory budget,
// and the idle reaper's choice of whom to end (only streams waiting for their
// client since before the timeout; never twice; a ticket may go while reaped).
#include "server/stream/stream_admission.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace flashtick {
namespace {

// What TickStreamReactor does, without gRPC: idle when waiting since `since`.
class FakeStream final : public IdleStream {
 public:
  void Ref() override { refs_.fetch_add(1); }
  void Unref() override { refs_.fetch_sub(1); }
  bool EndIfIdleSince(absl::Time idle_since, const absl::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_ || !waiting_ || since_ >= idle_since) return false;
    ended_ = true;
    status_ = status;
    return true;
  }
  void Wait() {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_ = true;
    since_ = absl::Now();
  }
  void Busy() {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_ = false;
  }
  bool ended() {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_;
  }
  absl::Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  int refs() const { return refs_.load(); }

 private:
  std::atomic<int> refs_{0};
  std::mutex mu_;
  bool waiting_ = false, ended_ = false;
  absl::Time since_;
  absl::Status status_;
};

StreamLimits Limits(int server, int client, int64_t memory, absl::Duration idle) {
  StreamLimits l;
  l.max_streams = server;
  l.max_streams_per_client = client;
  l.memory_bytes = memory;
  l.idle_timeout = idle;
  return l;
}

TEST(StreamAdmission, CountsPerClientAndPerServerAndReleases) {
  StreamAdmission admission(Limits(3, 2, 1 << 20, absl::Hours(1)), nullptr);
  auto a1 = admission.Admit("peer:a", nullptr);
  auto a2 = admission.Admit("peer:a", nullptr);
  ASSERT_TRUE(a1.ok() && a2.ok());
  auto a3 = admission.Admit("peer:a", nullptr);
  EXPECT_EQ(a3.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(a3.status().message().find("peer:a already has 2"), std::string::npos)
      << a3.status();
  auto b1 = admission.Admit("peer:b", nullptr);
  ASSERT_TRUE(b1.ok());
  auto b2 = admission.Admit("peer:b", nullptr);
  EXPECT_EQ(b2.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(b2.status().message().find("--max-streams 3"), std::string::npos) << b2.status();
  EXPECT_EQ(admission.open_streams(), 3);
  a1->reset();  // one of a's closes: a and the server both have room again
  EXPECT_EQ(admission.open_streams(), 2);
  auto a4 = admission.Admit("peer:a", nullptr);
  EXPECT_TRUE(a4.ok()) << a4.status();
}

TEST(StreamAdmission, MemoryIsReservedOnceAndReturned) {
  StreamAdmission admission(Limits(10, 10, 1000, absl::Hours(1)), nullptr);
  auto s1 = admission.Admit("c", nullptr);
  auto s2 = admission.Admit("c", nullptr);
  ASSERT_TRUE(s1.ok() && s2.ok());
  ASSERT_TRUE((*s1)->ReserveMemory(600).ok());
  EXPECT_EQ((*s1)->ReserveMemory(1).code(), absl::StatusCode::kFailedPrecondition);
  const absl::Status refused = (*s2)->ReserveMemory(401);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("--stream-memory-mb"), std::string::npos) << refused;
  EXPECT_EQ((*s2)->reserved_bytes(), 0) << "a refused reservation holds nothing";
  EXPECT_EQ(admission.reserved_bytes(), 600);
  EXPECT_TRUE((*s2)->ReserveMemory(400).ok()) << "exactly the limit fits";
  s1->reset();
  EXPECT_EQ(admission.reserved_bytes(), 400);
}

TEST(StreamAdmission, ReaperEndsOnlyStreamsWaitingPastTheTimeout) {
  const absl::Duration idle = absl::Milliseconds(200);
  StreamAdmission admission(Limits(10, 10, 1000, idle), nullptr);
  FakeStream waiting, busy, fresh;
  auto t1 = admission.Admit("c", &waiting);
  auto t2 = admission.Admit("c", &busy);
  auto t3 = admission.Admit("c", &fresh);
  ASSERT_TRUE(t1.ok() && t2.ok() && t3.ok());
  waiting.Wait();
  busy.Busy();  // computing an answer: never reaped however long it takes
  const auto start = std::chrono::steady_clock::now();
  // `fresh` keeps sending: it starts a new wait every 50 ms.
  while (!waiting.ended() &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    fresh.Wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(waiting.ended());
  EXPECT_EQ(waiting.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(waiting.status().message().find("--stream-idle-timeout-seconds"), std::string::npos);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(took, 0.19);
  EXPECT_LT(took, 2.0);
  EXPECT_FALSE(busy.ended());
  EXPECT_FALSE(fresh.ended());
  // Every reference the reaper took is returned.
  t1->reset();
  t2->reset();
  t3->reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(waiting.refs(), 0);
  EXPECT_EQ(busy.refs(), 0);
}

TEST(StreamAdmission, TicketsComeAndGoWhileTheReaperRuns) {
  StreamAdmission admission(Limits(64, 64, 1 << 20, absl::Milliseconds(40)), nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&admission, t] {
      for (int i = 0; i < 200; ++i) {
        FakeStream s;
        auto ticket = admission.Admit(absl::StrCat("c", t), &s);
        ASSERT_TRUE(ticket.ok()) << ticket.status();
        s.Wait();
        if (i % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ticket->reset();  // unregistered before the stream itself goes
        while (s.refs() != 0) std::this_thread::yield();  // as the reactor's refcount does
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(admission.open_streams(), 0);
}

}  // namespace
}  // namespace flashtick
