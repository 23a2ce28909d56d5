// CollectiveWatchdog (research/parallel/collective_watchdog.h).
#include "research/parallel/collective_watchdog.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace flashtick {
namespace {

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

}  // namespace

CollectiveWatchdog::CollectiveWatchdog(CollectiveProbes probes, std::string what,
                                       double timeout_seconds, double poll_seconds)
    : probes_(std::move(probes)),
      what_(std::move(what)),
      timeout_(Seconds(timeout_seconds)),
      poll_(Seconds(poll_seconds)),
      thread_([this] { Loop(); }) {}

CollectiveWatchdog::~CollectiveWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void CollectiveWatchdog::Launched() {
  // Never 0, which means "nothing launched yet".
  launched_at_.store(std::max<Clock::rep>(1, Clock::now().time_since_epoch().count()));
}

absl::Status CollectiveWatchdog::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void CollectiveWatchdog::Fire(absl::Status why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = std::move(why);
  }
  fired_.store(true);
  if (probes_.abort) probes_.abort();
}

void CollectiveWatchdog::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_ && !fired_.load()) {
    cv_.wait_for(lock, poll_, [this] { return stop_; });
    if (stop_) return;
    lock.unlock();
    absl::Status async = probes_.async_error ? probes_.async_error() : absl::OkStatus();
    if (!async.ok()) {
      Fire(absl::UnavailableError(absl::StrCat(
          what_, ": the communicator failed (", async.message(),
          "), most likely a peer process died; it was aborted, restart the job from a "
          "checkpoint")));
      return;
    }
    const Clock::rep at = launched_at_.load();
    if (at != 0 && probes_.pending && probes_.pending()) {
      const Clock::duration waited = Clock::now().time_since_epoch() - Clock::duration(at);
      if (waited > timeout_) {
        Fire(absl::DeadlineExceededError(absl::StrFormat(
            "%s: a collective made no progress for %.1f s (the timeout is %.1f s): a peer "
            "died or stalled; the communicator was aborted, restart the job from a checkpoint",
            what_, std::chrono::duration<double>(waited).count(),
            std::chrono::duration<double>(timeout_).count())));
        return;
      }
    }
    lock.lock();
  }
}

}  // namespace flashtick
