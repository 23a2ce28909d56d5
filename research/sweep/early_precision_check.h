// EarlyPrecisionCheck: the sweep's precision check (precision_check.h) of the arm the
// verdict most likely chooses, started as soon as that arm has finished, on a thread of
// its own, while the other arms still train.
//
// Why: the check's reference is a float64 forward on the CPU, tens of seconds for a few
// windows at N = 32,768, and after the last arm the GPU would sit idle through it. The
// arm checked is the first seed of the longest N: the gate chooses it when the sweep
// passes (the longest N best out of sample) and when no N is best (sweep_engine.cc,
// Judge). When the verdict chooses another arm, the engine checks that one after the
// arms, as it always did, and this check's CPU time was spent for nothing. Either way
// the report's figures are those of the chosen arm's saved model on the same windows.
// The early check runs its float64 reference on fewer threads than the machine has, so
// the threads that launch the arms' GPU work keep a core each.
#pragma once

#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "research/sweep/arm_result.h"
#include "research/sweep/precision_check.h"

namespace flashtick {

class EarlyPrecisionCheck {
 public:
  using Check = std::function<absl::StatusOr<PrecisionReport>()>;

  // `check` runs the precision check of arm `arm_id` (a thread of its own calls it).
  EarlyPrecisionCheck(std::string arm_id, Check check);
  // Waits for a check that is still running.
  ~EarlyPrecisionCheck();
  EarlyPrecisionCheck(const EarlyPrecisionCheck&) = delete;
  EarlyPrecisionCheck& operator=(const EarlyPrecisionCheck&) = delete;

  // From the sweep's on_arm hook: starts the check, once, when `arm` is the arm to
  // check and it is done.
  void ArmFinished(const ArmResult& arm);
  // The check of `arm_id` if this object ran it (waiting for it to end), else nullopt
  // (after a running check of another arm has ended, so its threads are free again).
  std::optional<absl::StatusOr<PrecisionReport>> Take(const std::string& arm_id);

 private:
  const std::string arm_id_;
  const Check check_;
  std::mutex mu_;
  std::future<absl::StatusOr<PrecisionReport>> running_;  // valid once started
};

}  // namespace flashtick
