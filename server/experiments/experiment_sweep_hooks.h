// ExperimentSweepHooks: where one experiment's sweep reports to (part of
// ExperimentRunner, experiment_runner.h). Training steps go to the metrics every time;
// arm progress goes to watchers (ProgressHub) and the store at most every
// publish_every / store_every seconds per arm, since a sweep steps far faster than
// anyone reads and each store write is a SQLite write; a phase change or an
// arm's last step always goes through, so neither misses an edge. Placements go to
// the GPU metrics and the log, a finished arm's result to the store.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <string>

#include "research/sweep/arm_result.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_engine.h"
#include "server/experiments/experiment_store.h"
#include "server/experiments/progress_hub.h"
#include "server/metrics/metrics.h"

namespace flashtick {

// The store's row for arm `index` of experiment `experiment_id` from its result.
ArmRecord ArmFromResult(const std::string& experiment_id, int index, const ArmResult& a);

class ExperimentSweepHooks {
 public:
  ExperimentSweepHooks(std::string experiment_id, const SweepConfig& config,
                       ExperimentStore* store, ProgressHub* hub, Metrics* metrics,
                       double publish_every_seconds, double store_every_seconds);

  // The hooks for SweepEngine::Run; they refer to this object, which must outlive the
  // sweep. The engine calls them one at a time, so the state here needs no lock.
  SweepHooks Hooks(const std::atomic<bool>* cancel);
  // After the sweep: every arm that reported progress is no longer running.
  void ClearRunning();

 private:
  using Clock = std::chrono::steady_clock;
  using LastSent = std::map<std::string, Clock::time_point>;  // arm_id → last sent

  void OnProgress(const SweepEvent& e);
  void OnPlacement(const ArmPlacement& p);
  void OnArm(const ArmResult& a);
  // Whether arm_id's progress goes out now (and if so, notes when).
  static bool Due(LastSent* last, const std::string& arm_id, bool edge, Clock::time_point now,
                  double every_seconds);

  const std::string id_;
  ExperimentStore* store_;
  ProgressHub* hub_;
  Metrics* metrics_;
  const double publish_every_seconds_, store_every_seconds_;
  int arms_ = 0;                          // the sweep's arm count, for watchers
  std::map<std::string, int> indexes_;    // arm_id → arm index, in plan order
  LastSent stored_, published_;
  std::map<std::string, std::string> running_arm_;  // arm_id → last phase
};

}  // namespace flashtick
