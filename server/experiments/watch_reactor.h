// WatchReactor: one flashtick.v1.Experiments/WatchExperiment stream. It subscribes
// to the ProgressHub, writes the experiment's current state first, then every
// progress event in order, one write in flight at a time, and finishes with OK
// after the event that ends the experiment (SUCCEEDED, FAILED, CANCELLED). A slow
// reader does not hold up training: while a write is outstanding, intermediate
// training events are coalesced (the newest kept), state changes never dropped.
// Deletes itself in OnDone, after unsubscribing.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include "flashtick/v1/experiments.grpc.pb.h"
#include "server/experiments/experiments_core.h"
#include "server/metrics/metrics.h"

namespace flashtick {

class WatchReactor final : public grpc::ServerWriteReactor<v1::ExperimentProgress> {
 public:
  // Ends at once with NOT_FOUND when `caller` may not see experiment `id`.
  WatchReactor(ExperimentsCore* core, Metrics* metrics, const std::string& id,
               const Caller& caller);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void Push(const v1::ExperimentProgress& event);
  void PumpLocked();  // callers hold mu_
  void FinishLocked(const grpc::Status& status, const char* code);

  ExperimentsCore* core_;
  Metrics* metrics_;
  std::mutex mu_;
  std::deque<v1::ExperimentProgress> pending_;
  v1::ExperimentProgress current_;
  bool writing_ = false, ended_ = false, finished_ = false;
  int64_t token_ = 0;
};

}  // namespace flashtick
