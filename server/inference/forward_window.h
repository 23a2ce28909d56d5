// ForwardWindow: what one forward costs, measured around it on the thread that runs
// it — wall-clock seconds, and the peak of the memory the forward uses on the model's
// backend (a MemoryScope, kernels/memory_scope.h): what it allocates, plus the part of
// the model's reused workspace it carves (model/transformer_forward.cc). Memory held
// before the window opened (weights, a stream's earlier decode state) is not in the
// peak, and neither is any other thread's: concurrent requests (--workers) and open
// streams on the same backend never count in each other's figure. ModelInfer
// (InferenceCore::RunBatch) and TickStream ticks (TickStreamReactor::PredictLast)
// both measure through it; see Metrics::RecordRequestPeakMemory.
#pragma once

#include <cstdint>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kernels/backend.h"
#include "kernels/memory_scope.h"

namespace flashtick {

class ForwardWindow {
 public:
  // Opens on the calling thread: starts the clock and the memory scope. Run the
  // forward on this thread while the window is alive.
  explicit ForwardWindow(const Backend& backend) : scope_(backend) {}

  absl::Time start() const { return start_; }
  double seconds() const { return absl::ToDoubleSeconds(absl::Now() - start_); }
  // The high-water mark of the bytes this forward held on the backend since it opened.
  int64_t peak_bytes() const { return scope_.peak_bytes(); }

 private:
  MemoryScope scope_;
  const absl::Time start_ = absl::Now();
};

}  // namespace flashtick
