// The transformer's parameters: their names and shapes (the safetensors layout in
// model/transformer.h), the GPT-2 initialisation, and DeviceParams, which holds them
// on a backend. Master weights are fp32 (what checkpoints store and optimizers
// update); each op reads a compute copy: matrices in the activation dtype (bf16 on
// CUDA, f64 for the precision check), vectors (biases, LayerNorm γ/β) in
// ParamDType(activation dtype). A copy is made with Op::kCast on the backend, or is
// the master itself when the dtypes agree.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "model/config.h"

namespace flashtick {

struct ParamSpec {
  enum class Init { kNormal, kResidualNormal, kZeros, kOnes };
  std::string name;
  std::vector<int64_t> shape;
  Init init = Init::kNormal;
  int64_t numel() const;
};

// Every parameter of `config`, in a fixed order (embed, blocks 0..L-1, ln_f, head).
std::vector<ParamSpec> TransformerParamSpecs(const ModelConfig& config);

// GPT-2 initialisation, deterministic from (seed, name): N(0, 0.02) for matrices,
// N(0, 0.02/√(2·layers)) for the residual projections (attn.proj, mlp.fc2), zero
// biases and β, unit γ. Each tensor draws from its own SplitMix64 stream seeded by the
// seed and a hash of its name, with Box–Muller normals, so the values are the same on
// every platform and standard library.
std::vector<float> InitParam(const ParamSpec& spec, const ModelConfig& config, uint64_t seed);

class DeviceParams {
 public:
  // Uploads fp32 host values (one per spec, by name) and makes compute copies.
  static absl::StatusOr<std::unique_ptr<DeviceParams>> Create(
      std::vector<ParamSpec> specs, const std::map<std::string, std::vector<float>>& host,
      Backend* backend, DType compute_dtype);

  // The compute copy of a parameter, shaped as its spec (matrices in the compute
  // dtype, vectors in ParamDType of it). The name must be one of the specs.
  const TensorView& compute(const std::string& name) const;
  const TensorView& master(const std::string& name) const;
  // A master weight copied back to the host.
  absl::StatusOr<std::vector<float>> MasterToHost(const std::string& name) const;

  const std::vector<ParamSpec>& specs() const { return specs_; }
  int64_t parameter_count() const;

 private:
  struct Entry {
    std::shared_ptr<void> master_mem, compute_mem;
    TensorView master, compute;
  };
  DeviceParams(std::vector<ParamSpec> specs, Backend* backend)
      : specs_(std::move(specs)), backend_(backend) {}
  std::vector<ParamSpec> specs_;
  Backend* backend_;
  std::map<std::string, Entry> entries_;
};

}  // namespace flashtick
