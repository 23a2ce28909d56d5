// StepProfiler: where one training step's time goes, node by node. The step is cut
// into consecutive segments, each opened by a mark on the backend's stream
// (Backend::RecordMark) and named by a phase and a kind; a segment lasts until the next
// mark, so the segments tile the step and their shares sum to 1. The marks are read after
// one synchronisation at the end of the step (End), never per node. On the GPU a segment
// is stream time: a node's kernels, or the idle gap while the host works (probe
// draws, copies), which is exactly what the step waits for.
//
// Phases: "forward", "backward", "hvp_bwd_bwd" (the HVP's backward-over-backward sweep),
// "hvp_backward" (its last backward sweep), "optimizer" (norm, update, weight copies) and
// "host" (work between the nodes: the batch upload, loss read-back, the plan switch,
// Hutchinson's probe and product). Kinds are node ops ("linear", "attention", ...) or
// names of the step's other work.
//
// Off unless the trainer is given a profiler (Trainer::set_profiler): then the graph
// tests one pointer per node and nothing else changes; the numbers are bit-identical.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace flashtick {

struct ProfileRow {
  std::string phase, kind;
  double ms = 0;       // summed over the steps of the profile
  int64_t count = 0;   // segments, summed over the steps
  double share = 0;    // ms / the profile's total_ms
};

struct StepProfile {
  int64_t steps = 0;
  double total_ms = 0;           // first mark to last, summed over the steps
  std::vector<ProfileRow> rows;  // by ms, largest first

  // Adds another profile's steps, time and counts (rows matched by phase and kind).
  void Add(const StepProfile& other);
  // Rows summed per phase (kind "*"), largest first.
  StepProfile ByPhase() const;
  // A text table: phase, kind, ms per step, count per step, share.
  std::string Table() const;
};

class StepProfiler {
 public:
  explicit StepProfiler(Backend* backend) : backend_(backend) {}

  // Starts a step: earlier marks are released for reuse.
  void Begin();
  // From here to the next Mark (or End) is charged to (phase, kind), both string
  // literals. Outside Begin..End (e.g. an evaluation between steps) it does nothing.
  absl::Status Mark(const char* phase, const char* kind);
  // Closes the step: the last mark, one Synchronize, then every segment's time.
  absl::StatusOr<StepProfile> End();
  bool active() const { return active_; }
  // The profile of the last step End closed (empty before the first).
  const StepProfile& last() const { return last_; }

 private:
  struct Segment {
    int mark;
    const char* phase;
    const char* kind;
  };
  Backend* backend_;
  std::vector<Segment> segments_;  // capacity kept across steps
  bool active_ = false;
  StepProfile last_;
};

// A mark on `profiler` when one is attached, nothing otherwise, so the training code
// marks its phases unconditionally (the trainer's step and the graph's nodes).
inline absl::Status MarkIfProfiling(StepProfiler* profiler, const char* phase, const char* kind) {
  return profiler == nullptr ? absl::OkStatus() : profiler->Mark(phase, kind);
}

}  // namespace flashtick
