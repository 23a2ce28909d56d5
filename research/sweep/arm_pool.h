// The sweep's arm pool (part of SweepEngine::Run, sweep_engine.h): `parallel` worker
// threads take the planned arms in order, each arm waits for its GPUs from the
// GpuScheduler (research/parallel/gpu_scheduler.h), trains through ArmRunner on
// backends the worker keeps while its GPUs stay the same, and reports progress,
// placement and its end through SweepHooks, one event at a time. The first arm that
// fails stops the others between steps; so does the caller's cancel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "research/split/research_dataset.h"
#include "research/sweep/arm_plan.h"
#include "research/sweep/arm_result.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_data.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {

// One planned arm: an N and a seed, its id (ArmId) and its plan.
struct ArmSlot {
  int64_t context = 0;
  uint64_t seed = 0;
  std::string id;
  ArmPlan plan;
};

// What the pool runs and where. The pointers outlive RunArmPool.
struct ArmPoolSetup {
  const SweepConfig* config = nullptr;
  const ResearchDataset* dataset = nullptr;
  const SweepData* data = nullptr;
  const std::vector<ArmSlot>* slots = nullptr;
  std::string dir;     // the experiment's directory; arms train in dir/arms/<arm_id>
  std::string device;  // cpu | cuda | auto (resolved from the config and the options)
  int threads = 0;     // CPU threads for the whole sweep, shared by the arms running
  int parallel = 1;    // worker threads: arms running side by side
  int gpus = 0;        // GPUs the scheduler places arms on (0: the CPU)
};

struct ArmPoolResult {
  std::vector<ArmResult> arms;      // by slot; empty arm_id: the arm never ran
  std::vector<absl::Status> errors;  // by slot; not OK: why that arm failed
  std::string backend_name;         // the backend of the last arm that got one
};

// The order the workers take the slots in. One worker: plan order (shortest N first, so
// the first arms' results come soonest; the total is the same in any order). Several:
// longest N first, then plan order. An arm's cost grows with N (attention per token),
// and the arms of one N cost about the same, so taking the costly ones first leaves the
// short ones to fill the workers that free up, instead of one long arm finishing alone
// (longest-processing-time-first list scheduling, Graham 1969).
std::vector<int> ArmTakeOrder(const std::vector<ArmSlot>& slots, int parallel);

// Runs every slot's arm and returns when all workers have stopped.
ArmPoolResult RunArmPool(const ArmPoolSetup& setup, const SweepHooks& hooks);

}  // namespace flashtick
