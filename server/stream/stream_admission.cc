// Tick-stream admission and idle reaping (see stream_admission.h).
#include "server/stream/stream_admission.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/metrics/metrics.h"

namespace flashtick {
namespace {

// The reaper looks often enough that a stream ends within a quarter of the timeout
// past it, and at least once a second; never busier than every 10 ms.
absl::Duration ReapPeriod(absl::Duration idle_timeout) {
  return std::clamp(idle_timeout / 4, absl::Milliseconds(10), absl::Seconds(1));
}

std::string Mib(int64_t bytes) { return absl::StrCat(bytes / (1 << 20), " MiB"); }

}  // namespace

StreamAdmission::StreamAdmission(const StreamLimits& limits, Metrics* metrics)
    : limits_(limits), metrics_(metrics) {
  if (metrics_ != nullptr) metrics_->SetStreamMemory(0, limits_.memory_bytes);
  reaper_ = std::thread([this] { ReapLoop(); });
}

StreamAdmission::~StreamAdmission() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  reaper_.join();
}

absl::StatusOr<std::unique_ptr<StreamAdmission::Ticket>> StreamAdmission::Admit(
    const std::string& client, IdleStream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (open_ >= limits_.max_streams) {
    if (metrics_ != nullptr) metrics_->RecordStreamRefused("server_limit");
    return absl::ResourceExhaustedError(absl::StrCat(
        "this server already has ", open_, " open tick streams, its limit (--max-streams ",
        limits_.max_streams, "); retry when one closes, or use another replica"));
  }
  int& mine = per_client_[client];
  if (mine >= limits_.max_streams_per_client) {
    if (metrics_ != nullptr) metrics_->RecordStreamRefused("client_limit");
    return absl::ResourceExhaustedError(absl::StrCat(
        "client ", client, " already has ", mine, " open tick streams, the per-client limit "
        "(--max-streams-per-client ", limits_.max_streams_per_client,
        "); close one (half-close it) before opening another"));
  }
  ++mine;
  ++open_;
  if (stream != nullptr) streams_.insert(stream);
  return std::unique_ptr<Ticket>(new Ticket(this, client, stream));
}

absl::Status StreamAdmission::Ticket::ReserveMemory(int64_t bytes) {
  std::lock_guard<std::mutex> lock(owner_->mu_);
  if (reserved_ != 0) {
    return absl::FailedPreconditionError("this stream has reserved its memory already");
  }
  const int64_t limit = owner_->limits_.memory_bytes;
  if (bytes > limit - owner_->reserved_) {
    if (owner_->metrics_ != nullptr) owner_->metrics_->RecordStreamRefused("memory");
    return absl::ResourceExhaustedError(absl::StrCat(
        "a session of this model reserves ", Mib(bytes), " for a whole day (feature rows and "
        "key/value cache at its max_steps), and open sessions hold ", Mib(owner_->reserved_),
        " of the ", Mib(limit), " for all streams (--stream-memory-mb); retry when a session "
        "closes, or ask the operator to raise the limit"));
  }
  reserved_ = bytes;
  owner_->reserved_ += bytes;
  if (owner_->metrics_ != nullptr) owner_->metrics_->SetStreamMemory(owner_->reserved_, limit);
  return absl::OkStatus();
}

StreamAdmission::Ticket::~Ticket() { owner_->Release(this); }

void StreamAdmission::Release(Ticket* ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  --open_;
  auto it = per_client_.find(ticket->client_);
  if (it != per_client_.end() && --it->second == 0) per_client_.erase(it);
  if (ticket->stream_ != nullptr) streams_.erase(ticket->stream_);
  reserved_ -= ticket->reserved_;
  if (metrics_ != nullptr) metrics_->SetStreamMemory(reserved_, limits_.memory_bytes);
}

int StreamAdmission::open_streams() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

int64_t StreamAdmission::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_;
}

void StreamAdmission::ReapLoop() {
  const absl::Duration period = ReapPeriod(limits_.idle_timeout);
  const absl::Status idle = absl::DeadlineExceededError(absl::StrCat(
      "the tick stream sent nothing for ", absl::FormatDuration(limits_.idle_timeout),
      " (--stream-idle-timeout-seconds) and was closed to free its slot; open a new stream to "
      "continue"));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, absl::ToChronoNanoseconds(period));
    if (stopping_) break;
    // Ref under the lock (a stream's ticket, hence its entry, goes only under it),
    // call outside it: ending a stream may run its gRPC reactions on this thread.
    std::vector<IdleStream*> streams(streams_.begin(), streams_.end());
    for (IdleStream* s : streams) s->Ref();
    lock.unlock();
    const absl::Time idle_since = absl::Now() - limits_.idle_timeout;
    int ended = 0;
    for (IdleStream* s : streams) {
      if (s->EndIfIdleSince(idle_since, idle)) ++ended;
      s->Unref();
    }
    if (metrics_ != nullptr && ended > 0) metrics_->RecordStreamIdleClosed(ended);
    lock.lock();
  }
}

}  // namespace flashtick
