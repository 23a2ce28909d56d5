// A fixed pool of worker threads with a blocking ParallelFor, used by the CPU
// backend so a 23,400-step forward uses every core. Work is split into contiguous
// chunks claimed from an atomic counter (cheap dynamic load balancing: causal
// attention rows near the end of the day cost more than rows near the start).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace flashtick::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads <= 0: hardware concurrency
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over [0, n) in chunks of at most `grain` items, on the pool
  // and the calling thread; returns when every chunk is done. Not re-entrant: a
  // nested call runs serially on the calling thread.
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop();
  void RunChunks();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, grain_ = 1;
  std::atomic<int64_t> next_{0};
  int active_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::atomic<bool> busy_{false};
};

}  // namespace flashtick::cpu
