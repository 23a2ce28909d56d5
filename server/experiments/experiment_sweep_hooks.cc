// ExperimentSweepHooks (see experiment_sweep_hooks.h).
#include "server/experiments/experiment_sweep_hooks.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/experiments/experiment_proto.h"
#include "server/logging.h"

namespace flashtick {
namespace {

// The store's row for an arm still training (or just done) from its progress.
ArmRecord ArmFromProgress(const std::string& id, const ArmProgress& a) {
  ArmRecord r;
  r.experiment_id = id;
  r.arm_index = a.arm_index;
  r.arm_id = a.arm_id;
  r.context = a.context;
  r.seed = a.seed;
  r.state = a.phase == "done" ? "done" : "running";
  r.fold = a.fold;
  r.folds = a.folds;
  r.epoch = a.epoch;
  r.step = a.step;
  r.total_steps = a.total_steps;
  r.loss = a.loss;
  r.tokens_per_second = a.tokens_per_second;
  r.peak_memory_bytes = a.peak_memory_bytes;
  return r;
}

}  // namespace

ArmRecord ArmFromResult(const std::string& id, int index, const ArmResult& a) {
  ArmRecord r;
  r.experiment_id = id;
  r.arm_index = index;
  r.arm_id = a.arm_id;
  r.context = a.context;
  r.seed = a.seed;
  r.state = ArmStateName(a.state);
  r.fold = std::max(0, a.evaluated_folds - 1);
  r.folds = a.folds;
  r.epoch = a.epochs();
  r.step = a.step;
  r.total_steps = a.total_steps;
  r.loss = a.loss;
  r.tokens_per_second = a.tokens_per_second();
  r.peak_memory_bytes = a.peak_memory_bytes;
  r.kernel_path = a.kernel_path;
  r.result_json = ArmResultToJson(a).dump();
  return r;
}

ExperimentSweepHooks::ExperimentSweepHooks(std::string experiment_id, const SweepConfig& config,
                                           ExperimentStore* store, ProgressHub* hub,
                                           Metrics* metrics, double publish_every_seconds,
                                           double store_every_seconds)
    : id_(std::move(experiment_id)),
      store_(store),
      hub_(hub),
      metrics_(metrics),
      publish_every_seconds_(publish_every_seconds),
      store_every_seconds_(store_every_seconds) {
  arms_ = static_cast<int>(config.contexts.size() * config.seeds.size());
  // The engine's plan order (sweep_engine.h: by N, then seed) gives each arm its index.
  int index = 0;
  for (int64_t n : config.contexts) {
    for (uint64_t seed : config.seeds) {
      indexes_[ArmId(n, seed, config.seeds.size() > 1)] = index++;
    }
  }
}

SweepHooks ExperimentSweepHooks::Hooks(const std::atomic<bool>* cancel) {
  SweepHooks hooks;
  hooks.cancel = cancel;
  hooks.on_progress = [this](const SweepEvent& e) { OnProgress(e); };
  hooks.on_placement = [this](const ArmPlacement& p) { OnPlacement(p); };
  hooks.on_arm = [this](const ArmResult& a) { OnArm(a); };
  return hooks;
}

void ExperimentSweepHooks::ClearRunning() {
  for (const auto& [arm, phase] : running_arm_) metrics_->SetArmRunning(id_, arm, false);
}

bool ExperimentSweepHooks::Due(LastSent* last, const std::string& arm_id, bool edge,
                               Clock::time_point now, double every_seconds) {
  auto it = last->find(arm_id);
  if (!edge && it != last->end() &&
      std::chrono::duration<double>(now - it->second).count() < every_seconds) {
    return false;
  }
  (*last)[arm_id] = now;
  return true;
}

void ExperimentSweepHooks::OnProgress(const SweepEvent& e) {
  const ArmProgress& a = e.arm;
  if (a.phase == "train") {
    metrics_->RecordTrainStep(id_, a.arm_id, a.loss, a.step_seconds, a.peak_memory_bytes,
                              a.hessian_refreshed);
  }
  const bool edge = running_arm_[a.arm_id] != a.phase || a.step == a.total_steps;
  if (running_arm_[a.arm_id].empty()) metrics_->SetArmRunning(id_, a.arm_id, true);
  running_arm_[a.arm_id] = a.phase;
  const auto now = Clock::now();
  if (Due(&published_, a.arm_id, edge, now, publish_every_seconds_)) {
    hub_->Publish(ProgressFromEvent(id_, e, arms_));
  }
  if (Due(&stored_, a.arm_id, edge, now, store_every_seconds_)) {
    (void)store_->UpsertArm(ArmFromProgress(id_, a));
  }
}

void ExperimentSweepHooks::OnPlacement(const ArmPlacement& p) {
  if (p.placed) metrics_->SetArmGpu(id_, p.arm_id, p.gpus.empty() ? -1 : p.gpus.front());
  metrics_->SetSweepGpus(p.gpus_busy, p.gpus_total);
  if (p.placed)
    LogInfo(absl::StrCat("experiment ", id_, " arm ", p.arm_id, " placed on ",
                         p.gpus.empty() ? std::string("the CPU")
                                        : absl::StrCat("GPU ", p.gpus.front()),
                         " (", p.gpus_busy, "/", p.gpus_total, " GPUs busy)"));
}

void ExperimentSweepHooks::OnArm(const ArmResult& a) {
  metrics_->SetArmRunning(id_, a.arm_id, false);
  (void)store_->UpsertArm(ArmFromResult(id_, indexes_[a.arm_id], a));
}

}  // namespace flashtick
