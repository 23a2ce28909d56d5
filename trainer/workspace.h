// Workspace: device memory and op calls for one training graph. It owns every tensor
// it allocates (activations, their cotangents, scratch), runs ops on the Backend, and
// implements the one accumulation rule all sweeps share:
//   a Slot is a tensor plus a `written` flag; the first contribution in a sweep is
//   written straight into it, later ones go to scratch and are added (kAdd), and
//   matmuls accumulate natively (beta = 1). A slot read before any write is zeroed.
// So fan-out (the residual stream feeding LayerNorm and the skip path), gradient
// accumulation over micro-batches and the two sources of a Hessian-vector product
// (backward-over-backward and the final backward) all use the same code path, and no
// buffer is cleared by a separate pass.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace flashtick {

struct Slot {
  TensorView view;
  bool written = false;
};

class Workspace {
 public:
  // 0: accumulation; 1..3: node-local temporaries; 4: a contribution produced in another
  // dtype than its slot (mixed precision: bf16 matmul → fp32 gradient), cast on the way in;
  // 5: the shifted keys and values of attention that excludes the step itself
  // (AttentionNode), beside the node's own temporaries.
  static constexpr int kScratchSlots = 6;
  static constexpr int kCastScratch = 4;
  static constexpr int kShiftScratch = 5;

  explicit Workspace(Backend* backend) : backend_(backend) {}

  Backend* backend() const { return backend_; }

  // A new contiguous tensor owned by the workspace (contents undefined).
  absl::StatusOr<TensorView> Allocate(DType dtype, std::initializer_list<int64_t> shape);
  // Scratch tensor k of this shape and dtype (contiguous), valid until the next
  // Scratch(k, ...) call; grows as needed and is reused between calls.
  absl::StatusOr<TensorView> Scratch(int k, DType dtype, std::initializer_list<int64_t> shape);

  // Frees the scratch tensors (the next Scratch call allocates afresh): a graph whose
  // plan changes drops the larger scratch the other plan's sweeps grew.
  void ReleaseScratch();

  absl::Status Run(const OpDesc& desc, std::initializer_list<TensorView> in,
                   std::initializer_list<TensorView> out);
  absl::Status Zero(const TensorView& t);
  absl::Status CopyTensor(const TensorView& dst, const TensorView& src);  // contiguous, same bytes

  // Where one contribution to `slot` goes: the slot itself when nothing is there yet,
  // else scratch k shaped like it; Finish adds the scratch into the slot (or marks a
  // direct write). Ops with several outputs open one Dest per output, each with its
  // own scratch index.
  struct Dest {
    TensorView view;
    Slot* slot = nullptr;
    bool direct = false;
  };
  absl::StatusOr<Dest> Begin(Slot& slot, int k);
  absl::Status Finish(const Dest& dest);

  // The accumulation rule above. `produce` writes one contribution into the view it is
  // given (the slot itself, or scratch 0 shaped like it).
  absl::Status Accumulate(Slot& slot,
                          const std::function<absl::Status(const TensorView&)>& produce);
  // The same for a contribution `produce` writes in `dtype`; when that is not the slot's
  // dtype it goes to the cast scratch and is converted with kCast.
  absl::Status AccumulateAs(Slot& slot, DType dtype,
                            const std::function<absl::Status(const TensorView&)>& produce);
  // slot (+)= op(A)·op(B) (+ bias on every row), accumulating through beta when A, B and
  // the slot share a dtype (else computed in A's dtype and cast). A bias [N] of
  // ParamDType(A's dtype) runs in the matmul's epilogue (kernels/ops/matmul.h).
  absl::Status AccumulateMatmul(Slot& slot, const TensorView& a, const TensorView& b, bool trans_a,
                                bool trans_b, const TensorView* bias = nullptr);
  // slot (+)= src (same shape; cast when the dtypes differ).
  absl::Status AccumulateCopy(Slot& slot, const TensorView& src);
  // dst = src converted to dst's dtype (same shape).
  absl::Status Cast(const TensorView& src, const TensorView& dst);
  // The slot's tensor for reading; zero-filled (and marked written) if nothing wrote it.
  absl::StatusOr<TensorView> Read(Slot& slot);

  int64_t allocated_bytes() const { return allocated_bytes_; }

 private:
  Backend* backend_;
  std::vector<std::shared_ptr<void>> owned_;
  std::shared_ptr<void> scratch_[kScratchSlots];
  size_t scratch_bytes_[kScratchSlots] = {};
  int64_t allocated_bytes_ = 0;
};

}  // namespace flashtick
