// ArmExecutor: the one seam between SweepEngine::Run (sweep_engine.h) and where its
// arms train. The engine plans the arms, hands them to an executor, and concludes
// (gate, precision check, report) from what the executor returns and what the arms
// left in <dir>/arms/<arm_id>/ (arm_runner.h), whichever executor ran them. The
// default trains them in this process (RunArmPool, arm_pool.h); the server's
// Kubernetes executor (server/experiments/k8s_arm_executor.h) runs them as an
// Indexed Job whose pods share the experiment directory (docs/deploy.md).
#pragma once

#include "research/sweep/arm_pool.h"
#include "research/sweep/sweep_engine.h"

namespace flashtick {

class ArmExecutor {
 public:
  virtual ~ArmExecutor() = default;
  // Trains every slot of `setup` (finished arms on disk are reused, not retrained) and
  // returns when none is running, with each arm's result or error as RunArmPool does.
  // Honours hooks.cancel; reports through the hooks as the arms progress.
  virtual ArmPoolResult Run(const ArmPoolSetup& setup, const SweepHooks& hooks) = 0;
};

}  // namespace flashtick
