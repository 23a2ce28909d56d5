// WatchReactor (see watch_reactor.h).
#include "server/experiments/watch_reactor.h"

#include "server/status_convert.h"

namespace flashtick {
namespace {

constexpr size_t kMaxPending = 64;  // coalesce training events beyond this backlog

bool Ends(const v1::ExperimentProgress& e) {
  return e.state() == v1::EXPERIMENT_STATE_SUCCEEDED || e.state() == v1::EXPERIMENT_STATE_FAILED ||
         e.state() == v1::EXPERIMENT_STATE_CANCELLED;
}

}  // namespace

WatchReactor::WatchReactor(ExperimentsCore* core, Metrics* metrics, const std::string& id,
                           const Caller& caller)
    : core_(core), metrics_(metrics) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<v1::ExperimentProgress> snapshot = core_->Snapshot(id, caller);
  if (!snapshot.ok()) {
    FinishLocked(ToGrpcStatus(snapshot.status()), StatusCodeName(snapshot.status()).c_str());
    return;
  }
  // Subscribe before the first write so no event falls between the two; the
  // listener takes mu_, which this constructor holds until the snapshot is queued.
  token_ = core_->hub()->Subscribe(id, [this](const v1::ExperimentProgress& e) { Push(e); });
  pending_.push_back(*snapshot);
  ended_ = Ends(*snapshot);
  PumpLocked();
}

void WatchReactor::Push(const v1::ExperimentProgress& event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_ || ended_) return;
  if (pending_.size() >= kMaxPending && event.phase() == "train") {
    // Replace the newest queued training event of the same arm instead of growing.
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
      if (it->phase() == "train" && it->arm_id() == event.arm_id()) {
        *it = event;
        return;
      }
    }
  }
  pending_.push_back(event);
  ended_ = Ends(event);
  PumpLocked();
}

void WatchReactor::PumpLocked() {
  if (finished_ || writing_) return;
  if (pending_.empty()) {
    if (ended_) FinishLocked(grpc::Status::OK, "OK");
    return;
  }
  current_ = std::move(pending_.front());
  pending_.pop_front();
  writing_ = true;
  StartWrite(&current_);
}

void WatchReactor::FinishLocked(const grpc::Status& status, const char* code) {
  if (finished_) return;
  finished_ = true;
  metrics_->RecordRequest("", "WatchExperiment", code, 0.0);
  Finish(status);
}

void WatchReactor::OnWriteDone(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  writing_ = false;
  if (!ok) {  // the client went away
    FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "watcher gone"), "CANCELLED");
    return;
  }
  PumpLocked();
}

void WatchReactor::OnCancel() {
  std::lock_guard<std::mutex> lock(mu_);
  FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled"), "CANCELLED");
}

void WatchReactor::OnDone() {
  if (token_ != 0) core_->hub()->Unsubscribe(token_);
  delete this;
}

}  // namespace flashtick
