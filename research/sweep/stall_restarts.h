// Restarts on a stall (training.stall_restarts; docs/research/sweeps.md, "Restarts on a
// stall"): the first fold's starts as the ArmResult keeps them. The training loop
// (arm_runner.cc) decides when a start has stalled and trains the starts; these keep
// the books: a stalled start's curves and best validation loss are moved out of the
// arm's own fields into ArmResult::stall_starts (so state.json and every checkpoint's
// attachment carry them, and an arm resumed mid-start still has them for the choice),
// and at the fold's end the start with the lowest best validation loss is moved back.
// A set-aside start's trainer lies in arms/<arm>/ckpt-f0-start<k>/ until the fold ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "research/sweep/arm_result.h"

namespace flashtick {

// The initialisation seed of start k of the first fold (training.restarts and
// stall_restarts): start 0 is the arm's own, so with neither the arm trains as it always did.
uint64_t RestartSeed(uint64_t seed, int k);

// Which of the first fold's starts the arm keeps (training.restarts and stall_restarts
// alike): the one with the lowest best validation loss, given per start in order (+∞ for
// one that never reached a check); the earliest on a tie, so without a difference the
// arm's own seed stays.
size_t ChooseStart(const std::vector<double>& best_validation_loss);

// training.stall_restart_repeat_tolerance: whether a stalled start's best validation loss
// `best` repeats an earlier start's (one of `earlier`, +∞ for one without a check), within
// `tolerance` of it relatively: |best − e| ≤ tolerance·e. The index of the first such
// earlier start, or −1 (also when tolerance is 0 or best is +∞).
int RepeatedStart(double best, const std::vector<double>& earlier, double tolerance);

// Why the start now training in r, which has stalled, gets no fresh start: "no stall
// restart left" once `allowed` (training.stall_restarts) have begun, "start k's loss
// again" when its best validation loss repeats set-aside start k's (RepeatedStart with
// training.stall_restart_repeat_tolerance); empty when it is restarted.
std::string WhyNoStallRestart(const ArmResult& r, int allowed, double tolerance);

// Where the trainer of set-aside start k is checkpointed: beside ckpt-f0.
std::string StallStartDir(const std::string& arm_dir, int start);
// Removes every set-aside start's checkpoint in arm_dir (the first fold has ended and its
// choice is in a checkpoint).
void RemoveStallStartDirs(const std::string& arm_dir);

// Moves the current start's own fields out of *r (its loss and validation curves, best
// validation loss and step, last loss) into a record of start `index` (seed, the steps it
// trained, what ended it), leaving *r's as a fresh start's. The cost stays in *r.
FirstFoldStart TakeStart(ArmResult* r, int index, uint64_t seed, int64_t steps,
                         std::string ended);

// At the first fold's end: of r->stall_starts and `current` (the last start, taken from
// *r with TakeStart), keeps the one with the lowest best validation loss (a start without
// a check counts as +∞; the earlier start on a tie): its fields go back into *r, the others
// stay in r->stall_starts (in order), r->restart_choice says what happened (`allowed`:
// training.stall_restarts). Returns the kept start's record (its curves moved out).
FirstFoldStart KeepBestStart(ArmResult* r, FirstFoldStart current, int allowed);

}  // namespace flashtick
