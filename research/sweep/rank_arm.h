// RunArmOnRank: SweepEngine::RunOneArm's path for one arm trained data-parallel over
// processes (docs/multi_gpu.md, "One sweep arm over processes"). Every rank of the
// group runs it with the same setup: it checks that the config fits the world (its
// replicas_per_arm is the world size, or 1, and the batch splits evenly across the
// ranks), makes this process's one backend (the CPU, or on CUDA the GPU of its local
// rank; GPU 0 when the process sees a single GPU, as a pod given one GPU does), and
// runs ArmRunner over the group. Rank 0 alone reports progress and the arm's end.
#pragma once

#include "absl/status/statusor.h"
#include "research/parallel/process_group.h"
#include "research/sweep/arm_pool.h"
#include "research/sweep/arm_result.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {

// setup.slots holds the one arm; setup.device is cpu, cuda or auto (auto: CUDA when a
// GPU is visible); setup.threads the CPU backend's threads (0: all cores).
absl::StatusOr<ArmResult> RunArmOnRank(const ArmPoolSetup& setup, ProcessGroup& group,
                                       const SweepHooks& hooks);

// InvalidArgument unless replicas_per_arm is 1 or `world` (one replica per process).
// RunArmOnRank checks it; a launcher checks it too before the rendezvous, so that every
// rank refuses on its own: after it, rank 0's exit closes the store the others may still
// be reading, and they would report that instead of the configuration's error.
absl::Status CheckReplicasForWorld(const SweepConfig& config, int world);

}  // namespace flashtick
