// GradientAllReducer: how one data-parallel replica of the Trainer sums its flat
// gradient (and Sophia-H's Hessian-vector product) with the other replicas'. The
// implementations live in research/parallel/: HostAllReducer (threads, the CPU backend)
// and NcclAllReducer (one GPU per replica). Protocol for one sum of a flat buffer of
// the ParamStore, identical on every replica and in the same order (a collective):
//   Begin(flat) → ParamReady(i) as each tensor i becomes final during the backward
//   sweep (buckets launch as soon as all their tensors are final, overlapping the rest
//   of the sweep) → Finish() (launches what is left; later backend work sees the sums).
// SumHost is a blocking sum of a few host scalars (labelled-row counts, the loss).
#pragma once

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/tensor.h"

namespace flashtick {

class GradientAllReducer {
 public:
  virtual ~GradientAllReducer() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // values[k] ← Σ_replicas values[k], the same on every replica.
  virtual absl::Status SumHost(absl::Span<double> values) = 0;

  // Starts a sum of `flat` (store->grads() or store->hv(), [total]) in place.
  virtual absl::Status Begin(const TensorView& flat) = 0;
  // Tensor `param` of the layout holds its final local value.
  virtual absl::Status ParamReady(int param) = 0;
  // Every bucket launched; work the backend enqueues afterwards reads the sums.
  virtual absl::Status Finish() = 0;
};

}  // namespace flashtick
