// ParamStore: allocation, initialisation, host transfer and safetensors I/O.
#include "trainer/param_store.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/ops/param_dtype.h"

namespace flashtick {

absl::StatusOr<std::unique_ptr<ParamStore>> ParamStore::Create(const ModelConfig& config,
                                                               DType dtype, Backend* backend) {
  return Create(config, dtype, dtype, backend);
}

absl::StatusOr<std::unique_ptr<ParamStore>> ParamStore::Create(const ModelConfig& config,
                                                               DType dtype, DType compute,
                                                               Backend* backend) {
  if (compute == DType::kI32 || DTypeSize(compute) > DTypeSize(dtype))
    return absl::InvalidArgumentError(absl::StrCat("compute dtype ", DTypeName(compute),
                                                   " must be a float no wider than the ",
                                                   DTypeName(dtype), " masters"));
  if (dtype != DType::kF32 && dtype != DType::kF64)
    return absl::InvalidArgumentError(
        absl::StrCat("training parameters are fp32 (or fp64 on the CPU), not ", DTypeName(dtype)));
  if (dtype == DType::kF64 && backend->device() != DeviceKind::kCpu)
    return absl::InvalidArgumentError("fp64 training runs on the CPU backend only");
  ASSIGN_OR_RETURN(ParamLayout layout, ParamLayout::ForConfig(config));
  std::unique_ptr<ParamStore> s(new ParamStore(config, std::move(layout), dtype, compute, backend));
  ASSIGN_OR_RETURN(s->values_, s->AllocateFlat());
  ASSIGN_OR_RETURN(s->grads_, s->AllocateFlat());
  ASSIGN_OR_RETURN(s->graph_.value,
                   s->ComputeViews(s->values_, &s->compute_values_, &s->owned_));
  const int n = static_cast<int>(s->layout_.params().size());
  for (int i = 0; i < n; ++i) s->graph_.grad.push_back(Slot{s->Tensor(s->grads_, i), false});
  RETURN_IF_ERROR(s->SyncCompute());
  return s;
}

DType ParamStore::OpDType(int i) const {
  return layout_.params()[i].spec.shape.size() >= 2 ? compute_dtype_ : ParamDType(compute_dtype_);
}

absl::StatusOr<std::vector<TensorView>> ParamStore::ComputeViews(
    const TensorView& flat, std::vector<bool>* is_copy,
    std::vector<std::shared_ptr<void>>* owner) {
  std::vector<TensorView> views;
  is_copy->clear();
  for (int i = 0; i < static_cast<int>(layout_.params().size()); ++i) {
    TensorView v = Tensor(flat, i);
    const bool copy = OpDType(i) != dtype_;
    if (copy) {
      v.dtype = OpDType(i);
      ASSIGN_OR_RETURN(std::shared_ptr<void> mem, backend_->Allocate(v.bytes()));
      v.data = mem.get();
      owner->push_back(std::move(mem));
    }
    views.push_back(v);
    is_copy->push_back(copy);
  }
  return views;
}

absl::Status ParamStore::Sync(const TensorView& flat, const std::vector<bool>& is_copy,
                              const std::vector<TensorView>& views) {
  for (size_t i = 0; i < views.size(); ++i) {
    if (!is_copy[i]) continue;
    OpDesc d;
    d.op = Op::kCast;
    d.dtype = dtype_;
    const std::vector<TensorView> in = {Tensor(flat, static_cast<int>(i))}, out = {views[i]};
    RETURN_IF_ERROR(backend_->Run(d, in, out));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorView> ParamStore::AllocateFlat() { return AllocateFlat(&owned_); }

absl::StatusOr<TensorView> ParamStore::AllocateFlat(std::vector<std::shared_ptr<void>>* owner) {
  TensorView v = MakeView(nullptr, dtype_, backend_->device(), {layout_.total()});
  ASSIGN_OR_RETURN(std::shared_ptr<void> mem, backend_->Allocate(v.bytes()));
  v.data = mem.get();
  owner->push_back(std::move(mem));
  RETURN_IF_ERROR(backend_->Zero(v.data, v.bytes()));  // the gaps stay zero for good
  return v;
}

TensorView ParamStore::Tensor(const TensorView& flat, int i) const {
  const FlatParam& p = layout_.params()[i];
  void* data = static_cast<char*>(flat.data) + p.offset * static_cast<int64_t>(DTypeSize(dtype_));
  return MakeView(data, dtype_, flat.device, p.spec.shape.data(),
                  static_cast<int>(p.spec.shape.size()));
}

absl::Status ParamStore::InitRandom(uint64_t seed) {
  std::vector<double> host(layout_.total(), 0.0);
  for (const FlatParam& p : layout_.params()) {
    const std::vector<float> v = InitParam(p.spec, config_, seed);  // as Transformer::InitRandom
    std::copy(v.begin(), v.end(), host.begin() + p.offset);
  }
  return FromHost(values_, host);
}

absl::Status ParamStore::EnableHvp() {
  if (hvp_enabled()) return absl::OkStatus();
  ASSIGN_OR_RETURN(probe_, AllocateFlat(&hvp_owned_));
  ASSIGN_OR_RETURN(hv_, AllocateFlat(&hvp_owned_));
  ASSIGN_OR_RETURN(graph_.probe, ComputeViews(probe_, &compute_probe_, &hvp_owned_));
  for (int i = 0; i < static_cast<int>(layout_.params().size()); ++i)
    graph_.hv.push_back(Slot{Tensor(hv_, i), false});
  // No cast of the probe into its compute copies here: it holds nothing yet. Whoever
  // writes it refreshes them (SyncProbe after a draw, FromHost), one cast per parameter
  // per refresh instead of two.
  return absl::OkStatus();
}

void ParamStore::ReleaseHvp() {
  probe_ = hv_ = TensorView{};
  graph_.probe.clear();
  graph_.hv.clear();
  compute_probe_.clear();
  hvp_owned_.clear();  // last: the views above pointed into these
}

void ParamStore::ResetGrads() {
  for (Slot& s : graph_.grad) s.written = false;
}
void ParamStore::ResetHv() {
  for (Slot& s : graph_.hv) s.written = false;
}

absl::Status ParamStore::Complete(std::vector<Slot>& slots) {
  for (Slot& s : slots) {
    if (s.written) continue;
    RETURN_IF_ERROR(backend_->Zero(s.view.data, s.view.bytes()));
    s.written = true;
  }
  return absl::OkStatus();
}
absl::Status ParamStore::CompleteGrads() { return Complete(graph_.grad); }
absl::Status ParamStore::CompleteHv() { return Complete(graph_.hv); }

absl::StatusOr<std::vector<double>> ParamStore::ToHost(const TensorView& flat) const {
  const int64_t n = flat.numel();
  std::vector<double> out(n);
  if (dtype_ == DType::kF64) {
    RETURN_IF_ERROR(
        backend_->Copy(out.data(), DeviceKind::kCpu, flat.data, flat.device, flat.bytes()));
  } else {
    std::vector<float> tmp(n);
    RETURN_IF_ERROR(
        backend_->Copy(tmp.data(), DeviceKind::kCpu, flat.data, flat.device, flat.bytes()));
    for (int64_t i = 0; i < n; ++i) out[i] = tmp[i];
  }
  return out;
}

absl::Status ParamStore::FromHost(const TensorView& flat, const std::vector<double>& host) {
  if (static_cast<int64_t>(host.size()) != flat.numel())
    return absl::InvalidArgumentError(absl::StrCat("parameter buffer has ", flat.numel(),
                                                   " elements, host vector ", host.size()));
  if (dtype_ == DType::kF64) {
    RETURN_IF_ERROR(
        backend_->Copy(flat.data, flat.device, host.data(), DeviceKind::kCpu, flat.bytes()));
  } else {
    std::vector<float> tmp(host.begin(), host.end());
    RETURN_IF_ERROR(
        backend_->Copy(flat.data, flat.device, tmp.data(), DeviceKind::kCpu, flat.bytes()));
  }
  if (flat.data == values_.data) return SyncCompute();
  if (probe_.data != nullptr && flat.data == probe_.data)
    return Sync(probe_, compute_probe_, graph_.probe);
  return absl::OkStatus();
}

absl::Status ParamStore::AddTo(Safetensors* st, const std::string& prefix,
                               const TensorView& flat) const {
  ASSIGN_OR_RETURN(std::vector<double> host, ToHost(flat));
  for (const FlatParam& p : layout_.params()) {
    if (dtype_ == DType::kF64) {
      RETURN_IF_ERROR(
          st->Add(prefix + p.spec.name, DType::kF64, p.spec.shape, host.data() + p.offset));
    } else {
      std::vector<float> f(host.begin() + p.offset, host.begin() + p.offset + p.numel);
      RETURN_IF_ERROR(st->Add(prefix + p.spec.name, DType::kF32, p.spec.shape, f.data()));
    }
  }
  return absl::OkStatus();
}

absl::Status ParamStore::ReadFrom(const Safetensors& st, const std::string& prefix,
                                  const TensorView& flat) {
  std::vector<double> host(layout_.total(), 0.0);
  for (const FlatParam& p : layout_.params()) {
    const std::string name = prefix + p.spec.name;
    auto it = st.tensors().find(name);
    if (it == st.tensors().end())
      return absl::NotFoundError(absl::StrCat("safetensors has no tensor '", name, "'"));
    const SafetensorsTensor& t = it->second;
    if (t.dtype == DType::kF64) {
      if (t.shape != p.spec.shape)
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor '", name, "' does not have the shape model ", config_.name, " needs"));
      std::memcpy(host.data() + p.offset, t.data.data(), p.numel * sizeof(double));
    } else {
      ASSIGN_OR_RETURN(std::vector<float> f, st.ToFloat32(name, p.spec.shape));
      std::copy(f.begin(), f.end(), host.begin() + p.offset);
    }
  }
  return FromHost(flat, host);
}

}  // namespace flashtick
