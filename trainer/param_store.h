// ParamStore: the trainable parameters on a Backend as flat buffers in the layout of
// trainer/param_layout.h: values (the master weights), gradients, and for
// Hessian-vector products the probe v and the product ∇²L·v. Hands out per-tensor
// views (GraphParams) to the training graph, copies flat buffers to and from the host,
// and reads/writes them as safetensors under the model's tensor names.
// Mixed precision: masters, gradients, products and optimizer state are in the master
// dtype (fp32; fp64 on the CPU). The graph computes in the compute dtype A (bf16 on
// CUDA): each op reads matrices in A and vectors (biases, γ, β) in ParamDType(A). A
// tensor whose master dtype differs gets a compute copy, refreshed with kCast whenever
// the master changes (FromHost on values/probe, SyncCompute after an optimizer step).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "model/config.h"
#include "model/safetensors.h"
#include "trainer/graph_node.h"
#include "trainer/param_layout.h"

namespace flashtick {

class ParamStore {
 public:
  // dtype: masters (fp32, or fp64 on the CPU); compute_dtype: activations.
  static absl::StatusOr<std::unique_ptr<ParamStore>> Create(const ModelConfig& config, DType dtype,
                                                            Backend* backend);
  static absl::StatusOr<std::unique_ptr<ParamStore>> Create(const ModelConfig& config, DType dtype,
                                                            DType compute_dtype, Backend* backend);

  const ModelConfig& config() const { return config_; }
  const ParamLayout& layout() const { return layout_; }
  DType dtype() const { return dtype_; }
  DType compute_dtype() const { return compute_dtype_; }
  Backend* backend() const { return backend_; }

  // GPT-2 initialisation from a seed: the same values as Transformer::InitRandom(seed)
  // (InitParam of model/params.h).
  absl::Status InitRandom(uint64_t seed);
  // Allocates the probe and product buffers (and the probe's compute copies); a no-op
  // while they exist. ReleaseHvp frees them: the trainer holds them only on steps that
  // refresh the Hessian estimate, so plain steps do not carry 2–3 parameter-sized
  // buffers they never read.
  absl::Status EnableHvp();
  void ReleaseHvp();
  bool hvp_enabled() const { return probe_.data != nullptr; }

  // Flat buffers [total] (gaps between tensors are zero).
  const TensorView& values() const { return values_; }
  const TensorView& grads() const { return grads_; }
  const TensorView& probe() const { return probe_; }
  const TensorView& hv() const { return hv_; }
  // A new zeroed flat buffer [total] owned by the store (optimizer state, probes).
  absl::StatusOr<TensorView> AllocateFlat();
  // A flat buffer's tensor i as [shape...].
  TensorView Tensor(const TensorView& flat, int i) const;

  GraphParams& graph() { return graph_; }
  // Starts a new gradient (or product) accumulation: the next write overwrites.
  void ResetGrads();
  void ResetHv();
  // Zero-fills tensors nothing wrote since the reset (a parameter the graph skipped).
  absl::Status CompleteGrads();
  absl::Status CompleteHv();

  // Refreshes the compute copies of the masters (after an optimizer step).
  absl::Status SyncCompute() { return Sync(values_, compute_values_, graph_.value); }
  // Refreshes the probe's compute copies (after an op wrote the probe on the device).
  absl::Status SyncProbe() { return Sync(probe_, compute_probe_, graph_.probe); }

  // Flat buffer ↔ host doubles (exact for fp32 and fp64). FromHost into values() or
  // probe() also refreshes their compute copies.
  absl::StatusOr<std::vector<double>> ToHost(const TensorView& flat) const;
  absl::Status FromHost(const TensorView& flat, const std::vector<double>& host);

  // Adds each tensor of `flat` to st as "<prefix><name>" in the store's dtype.
  absl::Status AddTo(Safetensors* st, const std::string& prefix, const TensorView& flat) const;
  // Reads "<prefix><name>" for every tensor into `flat` (shapes must match; F32/F64
  // files are accepted for either store dtype).
  absl::Status ReadFrom(const Safetensors& st, const std::string& prefix, const TensorView& flat);

 private:
  ParamStore(ModelConfig config, ParamLayout layout, DType dtype, DType compute, Backend* backend)
      : config_(std::move(config)),
        layout_(std::move(layout)),
        dtype_(dtype),
        compute_dtype_(compute),
        backend_(backend) {}
  // The dtype op inputs need for tensor i (A for matrices, ParamDType(A) for vectors).
  DType OpDType(int i) const;
  // Views for the ops: the master's tensor where the dtypes agree, else a new copy.
  absl::StatusOr<std::vector<TensorView>> ComputeViews(const TensorView& flat,
                                                       std::vector<bool>* is_copy,
                                                       std::vector<std::shared_ptr<void>>* owner);
  absl::StatusOr<TensorView> AllocateFlat(std::vector<std::shared_ptr<void>>* owner);
  absl::Status Sync(const TensorView& flat, const std::vector<bool>& is_copy,
                    const std::vector<TensorView>& views);
  absl::Status Complete(std::vector<Slot>& slots);

  ModelConfig config_;
  ParamLayout layout_;
  DType dtype_, compute_dtype_;
  Backend* backend_;
  std::vector<bool> compute_values_, compute_probe_;  // which tensors have a copy
  std::vector<std::shared_ptr<void>> owned_;
  std::vector<std::shared_ptr<void>> hvp_owned_;  // probe, product, the probe's copies
  TensorView values_, grads_, probe_, hv_;
  GraphParams graph_;
};

}  // namespace flashtick
