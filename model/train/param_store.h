// ParamStore: the trainable parameters on a Backend as flat buffers in the layout of
// model/train/param_layout.h: values (the master weights), gradients, and for
// Hessian-vector products the probe v and the product ∇²L·v. Hands out per-tensor
// views (GraphParams) to the training graph, copies flat buffers to and from the host,
// and reads/writes them as safetensors under the model's tensor names.
// dtype: fp32, or fp64 on the CPU (the oracle tests). Compute in bf16 on the GPU with
// fp32 masters is not wired yet: the graph computes in the parameter dtype.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "model/config.h"
#include "model/safetensors.h"
#include "model/train/graph_node.h"
#include "model/train/param_layout.h"

namespace flashtick {

class ParamStore {
 public:
  static absl::StatusOr<std::unique_ptr<ParamStore>> Create(const ModelConfig& config, DType dtype,
                                                            Backend* backend);

  const ModelConfig& config() const { return config_; }
  const ParamLayout& layout() const { return layout_; }
  DType dtype() const { return dtype_; }
  Backend* backend() const { return backend_; }

  // GPT-2 initialisation from a seed: the same values as Transformer::InitRandom(seed)
  // (InitParam of model/params.h).
  absl::Status InitRandom(uint64_t seed);
  // Allocates the probe and product buffers (once).
  absl::Status EnableHvp();
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

  // Flat buffer ↔ host doubles (exact for fp32 and fp64).
  absl::StatusOr<std::vector<double>> ToHost(const TensorView& flat) const;
  absl::Status FromHost(const TensorView& flat, const std::vector<double>& host);

  // Adds each tensor of `flat` to st as "<prefix><name>" in the store's dtype.
  absl::Status AddTo(Safetensors* st, const std::string& prefix, const TensorView& flat) const;
  // Reads "<prefix><name>" for every tensor into `flat` (shapes must match; F32/F64
  // files are accepted for either store dtype).
  absl::Status ReadFrom(const Safetensors& st, const std::string& prefix, const TensorView& flat);

 private:
  ParamStore(ModelConfig config, ParamLayout layout, DType dtype, Backend* backend)
      : config_(std::move(config)), layout_(std::move(layout)), dtype_(dtype), backend_(backend) {}
  absl::Status Complete(std::vector<Slot>& slots);

  ModelConfig config_;
  ParamLayout layout_;
  DType dtype_;
  Backend* backend_;
  std::vector<std::shared_ptr<void>> owned_;
  TensorView values_, grads_, probe_, hv_;
  GraphParams graph_;
};

}  // namespace flashtick
