// SweepClock: the wall-clock a sweep has taken over every call that worked on its
// directory. A sweep cut off by a time limit (a 10-minute device call, a SIGTERM, even
// kill -9) resumes from its arms' checkpoints in the next call, so the time a user pays
// for the answer is the sum of the calls, not the last call's. The report states both
// (docs/research/sweeps.md, "Wall-clock over resumes").
//
// The ledger is <dir>/wall_clock.json: {"seconds": earlier calls plus this one so far,
// "calls": n}. A thread rewrites it (atomically) every heartbeat, so a call killed
// without warning loses at most one heartbeat of its time. The ledger only informs the
// report: one that cannot be read (hand-edited, another version's) is set aside with a
// warning and counting starts again, and a failed write never stops the sweep.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace flashtick {

class SweepClock {
 public:
  // Reads the ledger of `dir` (none: the first call) and starts counting this call.
  explicit SweepClock(std::string dir,
                      std::chrono::milliseconds heartbeat = std::chrono::seconds(5));
  // Stops the heartbeat and writes the final figure.
  ~SweepClock();
  SweepClock(const SweepClock&) = delete;
  SweepClock& operator=(const SweepClock&) = delete;

  double this_call_seconds() const;
  // The earlier calls' seconds plus this call's so far.
  double total_seconds() const;
  // The calls that worked on the directory, this one included.
  int calls() const { return earlier_calls_ + 1; }

  static std::string LedgerPath(const std::string& dir) { return dir + "/wall_clock.json"; }

 private:
  void Write() const;
  void Beat();

  std::string dir_;
  std::chrono::milliseconds heartbeat_;
  std::chrono::steady_clock::time_point start_;
  double earlier_seconds_ = 0;
  int earlier_calls_ = 0;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace flashtick
