// RunArmOnRank: one rank's share of an arm over processes (research/sweep/rank_arm.h).
#include "research/sweep/rank_arm.h"

#include <exception>
#include <memory>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/backend.h"
#include "research/sweep/arm_runner.h"

namespace flashtick {
namespace {

// replicas_per_arm W is the in-process arm this one equals; 1 leaves the split to the
// launch (the plan does not depend on it). Anything else names another job.
absl::Status CheckWorld(const SweepConfig& config, const ArmSlot& slot, int world) {
  RETURN_IF_ERROR(CheckReplicasForWorld(config, world));
  if (slot.plan.batch % world != 0)
    return absl::InvalidArgumentError(absl::StrCat(  // the caller names the arm
        "its batch of ", slot.plan.batch, " sequences does not split across ", world,
        " processes"));
  return absl::OkStatus();
}

// This process's backend: the CPU, or one GPU (its local rank's; GPU 0 when it sees
// one), whose index goes to *gpu (−1: the CPU).
absl::StatusOr<std::unique_ptr<Backend>> RankBackend(const ArmPoolSetup& setup,
                                                     const ProcessGroup& group, int* gpu) {
  *gpu = -1;
  const int visible = setup.device == "cpu" ? 0 : DeviceCount(DeviceKind::kCuda);
  BackendOptions bo;
  bo.threads = setup.threads;
  bo.deterministic = setup.config->training.deterministic;
  if (setup.device == "cpu" || (setup.device == "auto" && visible == 0))
    return CreateBackend("cpu", bo);
  const int local = group.config().local_rank;
  if (visible > 1 && local >= visible)
    return absl::InvalidArgumentError(absl::StrCat("rank ", group.rank(), ": local rank ", local,
                                                   " but only ", visible, " GPUs are visible"));
  bo.device_index = visible == 1 ? 0 : local;
  *gpu = bo.device_index;
  return CreateBackend("cuda", bo);
}

}  // namespace

absl::Status CheckReplicasForWorld(const SweepConfig& config, int world) {
  if (config.replicas_per_arm == 1 || config.replicas_per_arm == world) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the sweep's replicas_per_arm is ", config.replicas_per_arm, " but the arm runs over ",
      world, " processes (--world-size / WORLD_SIZE): one replica per process, so "
      "replicas_per_arm must be ", world, " (or 1)"));
}

absl::StatusOr<ArmResult> RunArmOnRank(const ArmPoolSetup& setup, ProcessGroup& group,
                                       const SweepHooks& hooks) {
  const ArmSlot& slot = setup.slots->front();
  // The ranks agree on a refusal before any leaves: one that exited on its own could close
  // the rendezvous store (rank 0's) under a rank still finishing the rendezvous, which
  // would then report the store's loss instead of the refusal. Every rank computes the
  // same check; each says it, and rank 0 waits in Leave until all have.
  const absl::Status fits = CheckWorld(*setup.config, slot, group.world_size());
  ASSIGN_OR_RETURN(const bool refused, group.AnyTrue(!fits.ok()));
  if (refused) {
    group.Leave().IgnoreError();  // the refusal is the error to report
    if (!fits.ok()) return fits;
    return absl::AbortedError("another rank refused the arm for this world size");
  }
  int gpu = -1;
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, RankBackend(setup, group, &gpu));
  ArmInputs in;
  in.config = setup.config;
  in.dataset = setup.dataset;
  in.data = setup.data;
  in.plan = &slot.plan;
  in.arm_index = 0;  // the slot's index in setup.slots, as RunArmPool numbers it
  in.arm_id = slot.id;
  in.seed = slot.seed;
  in.dir = setup.dir + "/arms/" + slot.id;
  in.backend = backend.get();
  in.group = &group;
  if (gpu >= 0) in.gpus = {gpu};  // NCCL's device: the backend's, not always the local rank
  const bool lead = group.rank() == 0;
  ArmHooks ah;
  // Each rank reads its own cancel flag; ArmRunner agrees on it every step.
  ah.stop_requested = [&hooks] { return hooks.Cancelled(); };
  if (lead && hooks.on_progress) {
    ah.on_progress = [&hooks](const ArmProgress& p) {
      // One arm: what is left of it at the step's pace.
      const double eta = p.step_seconds > 0 ? (p.total_steps - p.step) * p.step_seconds : -1;
      hooks.on_progress(SweepEvent{p, eta});
    };
  }
  absl::StatusOr<ArmResult> r = absl::UnknownError("the arm did not run");
  try {  // as the arm pool: an exception fails the arm, not the process
    r = ArmRunner::Run(in, ah);
  } catch (const std::bad_alloc&) {
    r = absl::ResourceExhaustedError("out of memory (std::bad_alloc) while the arm ran");
  } catch (const std::exception& e) {
    r = absl::InternalError(absl::StrCat("the arm threw: ", e.what()));
  }
  if (!r.ok()) return r.status();
  if (lead && hooks.on_arm) hooks.on_arm(*r);
  return r;
}

}  // namespace flashtick
