// SweepClock (see sweep_clock.h).
#include "research/sweep/sweep_clock.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/file_io.h"

namespace flashtick {
namespace {

using json = nlohmann::json;

// The earlier calls' figures, or {0, 0} when there is no ledger or it cannot be read.
std::pair<double, int> ReadLedger(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return {0, 0};  // the first call on this directory
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("seconds") && j.contains("calls") &&
      j["seconds"].is_number() && j["calls"].is_number_integer()) {
    const double seconds = j["seconds"].get<double>();
    const int64_t calls = j["calls"].get<int64_t>();
    if (std::isfinite(seconds) && seconds >= 0 && calls >= 0 && calls < (1 << 30)) {
      return {seconds, static_cast<int>(calls)};
    }
  }
  std::fprintf(stderr, "sweep: %s is not a wall-clock ledger; counting starts again\n",
               path.c_str());
  return {0, 0};
}

}  // namespace

SweepClock::SweepClock(std::string dir, std::chrono::milliseconds heartbeat)
    : dir_(std::move(dir)), heartbeat_(heartbeat), start_(std::chrono::steady_clock::now()) {
  std::tie(earlier_seconds_, earlier_calls_) = ReadLedger(LedgerPath(dir_));
  Write();  // counts this call even if it is killed before the first beat
  thread_ = std::thread([this] { Beat(); });
}

SweepClock::~SweepClock() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
  Write();
}

double SweepClock::this_call_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double SweepClock::total_seconds() const { return earlier_seconds_ + this_call_seconds(); }

void SweepClock::Write() const {
  const json j = {{"seconds", total_seconds()}, {"calls", calls()}};
  absl::Status s = WriteFileAtomic(LedgerPath(dir_), j.dump() + "\n");
  if (!s.ok()) std::fprintf(stderr, "sweep: wall-clock ledger: %s\n", s.ToString().c_str());
}

void SweepClock::Beat() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, heartbeat_, [this] { return stop_; })) Write();
}

}  // namespace flashtick
