// Workspace: allocation, scratch, op calls and the slot accumulation rule.
#include "trainer/workspace.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flashtick {

absl::StatusOr<TensorView> Workspace::Allocate(DType dtype, std::initializer_list<int64_t> shape) {
  TensorView v =
      MakeView(nullptr, dtype, backend_->device(), shape.begin(), static_cast<int>(shape.size()));
  ASSIGN_OR_RETURN(std::shared_ptr<void> mem, backend_->Allocate(v.bytes()));
  v.data = mem.get();
  owned_.push_back(std::move(mem));
  allocated_bytes_ += static_cast<int64_t>(v.bytes());
  return v;
}

absl::StatusOr<TensorView> Workspace::Scratch(int k, DType dtype,
                                              std::initializer_list<int64_t> shape) {
  if (k < 0 || k >= kScratchSlots)
    return absl::InternalError(absl::StrCat("workspace: scratch slot ", k, " does not exist"));
  TensorView v =
      MakeView(nullptr, dtype, backend_->device(), shape.begin(), static_cast<int>(shape.size()));
  if (v.bytes() > scratch_bytes_[k]) {
    scratch_[k].reset();  // free first: the peak is the new size, not old + new
    ASSIGN_OR_RETURN(scratch_[k], backend_->Allocate(v.bytes()));
    allocated_bytes_ += static_cast<int64_t>(v.bytes() - scratch_bytes_[k]);
    scratch_bytes_[k] = v.bytes();
  }
  v.data = scratch_[k].get();
  return v;
}

void Workspace::ReleaseScratch() {
  for (int k = 0; k < kScratchSlots; ++k) {
    scratch_[k].reset();
    allocated_bytes_ -= static_cast<int64_t>(scratch_bytes_[k]);
    scratch_bytes_[k] = 0;
  }
}

absl::Status Workspace::Run(const OpDesc& desc, std::initializer_list<TensorView> in,
                            std::initializer_list<TensorView> out) {
  std::vector<TensorView> i(in), o(out);
  absl::Status s = backend_->Run(desc, i, o);
  if (!s.ok())
    return absl::Status(s.code(),
                        absl::StrCat("training graph: ", desc.DebugString(), ": ", s.message()));
  return s;
}

absl::Status Workspace::Zero(const TensorView& t) {
  if (!t.contiguous()) return absl::InternalError("workspace: Zero needs a contiguous tensor");
  return backend_->Zero(t.data, t.bytes());
}

absl::Status Workspace::CopyTensor(const TensorView& dst, const TensorView& src) {
  if (dst.bytes() != src.bytes() || dst.dtype != src.dtype || !dst.contiguous() ||
      !src.contiguous())
    return absl::InternalError(
        absl::StrCat("workspace: cannot copy ", src.DebugString(), " to ", dst.DebugString()));
  return backend_->Copy(dst.data, dst.device, src.data, src.device, src.bytes());
}

absl::StatusOr<Workspace::Dest> Workspace::Begin(Slot& slot, int k) {
  Dest d;
  d.slot = &slot;
  d.direct = !slot.written;
  if (d.direct) {
    d.view = slot.view;
    return d;
  }
  ASSIGN_OR_RETURN(TensorView s, Scratch(k, slot.view.dtype, {slot.view.numel()}));
  d.view =
      MakeView(s.data, slot.view.dtype, slot.view.device, slot.view.shape.data(), slot.view.rank);
  return d;
}

absl::Status Workspace::Finish(const Dest& d) {
  if (d.direct) {
    d.slot->written = true;
    return absl::OkStatus();
  }
  OpDesc add;
  add.op = Op::kAdd;
  add.dtype = d.slot->view.dtype;
  return Run(add, {d.slot->view, d.view}, {d.slot->view});
}

absl::Status Workspace::Accumulate(Slot& slot,
                                   const std::function<absl::Status(const TensorView&)>& produce) {
  ASSIGN_OR_RETURN(Dest d, Begin(slot, 0));
  RETURN_IF_ERROR(produce(d.view));
  return Finish(d);
}

absl::Status Workspace::Cast(const TensorView& src, const TensorView& dst) {
  OpDesc d;
  d.op = Op::kCast;
  d.dtype = src.dtype;
  return Run(d, {src}, {dst});
}

absl::Status Workspace::AccumulateAs(
    Slot& slot, DType dtype, const std::function<absl::Status(const TensorView&)>& produce) {
  if (dtype == slot.view.dtype) return Accumulate(slot, produce);
  ASSIGN_OR_RETURN(TensorView s, Scratch(kCastScratch, dtype, {slot.view.numel()}));
  const TensorView tmp =
      MakeView(s.data, dtype, slot.view.device, slot.view.shape.data(), slot.view.rank);
  RETURN_IF_ERROR(produce(tmp));
  return Accumulate(slot, [&](const TensorView& dst) { return Cast(tmp, dst); });
}

absl::Status Workspace::AccumulateMatmul(Slot& slot, const TensorView& a, const TensorView& b,
                                         bool trans_a, bool trans_b, const TensorView* bias) {
  OpDesc d;
  d.op = Op::kMatmul;
  d.dtype = a.dtype;
  d.matmul.trans_a = trans_a;
  d.matmul.trans_b = trans_b;
  d.matmul.bias = bias != nullptr;
  auto run = [&](const TensorView& c) {
    return bias != nullptr ? Run(d, {a, b, *bias}, {c}) : Run(d, {a, b}, {c});
  };
  if (a.dtype != slot.view.dtype) return AccumulateAs(slot, a.dtype, run);
  d.matmul.beta = slot.written ? 1.0f : 0.0f;
  RETURN_IF_ERROR(run(slot.view));
  slot.written = true;
  return absl::OkStatus();
}

absl::Status Workspace::AccumulateCopy(Slot& slot, const TensorView& src) {
  if (src.dtype != slot.view.dtype)
    return Accumulate(slot, [&](const TensorView& dst) { return Cast(src, dst); });
  if (!slot.written) {
    RETURN_IF_ERROR(CopyTensor(slot.view, src));
    slot.written = true;
    return absl::OkStatus();
  }
  OpDesc add;
  add.op = Op::kAdd;
  add.dtype = slot.view.dtype;
  return Run(add, {slot.view, src}, {slot.view});
}

absl::StatusOr<TensorView> Workspace::Read(Slot& slot) {
  if (!slot.written) {
    RETURN_IF_ERROR(Zero(slot.view));
    slot.written = true;
  }
  return slot.view;
}

}  // namespace flashtick
