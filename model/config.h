// ModelConfig: the shape of the causal tick transformer, stored as config.json
// beside the weights (model.safetensors). One model runs at any T up to
// max_context because positions are rotary (no learned position table).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace flashtick {

// At most this many Fourier periods (2 input columns each).
inline constexpr size_t kMaxFourierPeriods = 32;

struct ModelConfig {
  std::string name = "flashtick-tiny";
  int features = 6;      // F: per-step tick features (ticks/features.h lists them)
  int width = 64;        // C
  int layers = 2;
  int heads = 4;         // H; head dim D = width / heads
  int kv_heads = 4;      // Hkv (grouped-query attention when < heads)
  int mlp_ratio = 4;     // hidden width of the MLP = mlp_ratio · C
  int classes = 3;       // down / flat / up
  int max_context = 32768;
  float rope_theta = 10000.0f;
  // Leading dims of each head that RoPE rotates (−1 = all of them). The rest score q·k
  // by content alone at any distance (kernels/ops/rope.h, docs/model.md).
  int rotary_dims = -1;
  // Every nope_interval-th layer (layers k−1, 2k−1, …; 0: none) attends without
  // positions: no rotation at all, so its q·k matches by content at any distance, while
  // the rotated layers keep the recency that lets training start. The interleaving of
  // Llama 4 (iRoPE) and of "RoPE to NoPE and Back Again" (Yang et al. 2025), docs/model.md.
  int nope_interval = 0;
  // The first exclude_self_layers layers attend to the steps before the query only,
  // plus a zero "sink" key: their keys and values are shifted one step down before the
  // causal attention (K̃_j = k_{j−1}, Ṽ_j = v_{j−1}, K̃_0 = Ṽ_0 = 0), so a step cannot
  // match its own key. docs/model.md, "Attention that excludes the step itself".
  int exclude_self_layers = 0;
  float layernorm_eps = 1e-5f;
  // Fourier input features (model/input_encoding.h, docs/model.md): column
  // fourier_feature (−1: none) enters as sin/cos(2π·x/p) for each period p, in the
  // column's own units (the normalised feature the model is given).
  int fourier_feature = -1;
  std::vector<float> fourier_periods;

  int head_dim() const { return width / heads; }
  int rotated_dims() const { return rotary_dims < 0 ? head_dim() : rotary_dims; }
  bool layer_excludes_self(int l) const { return l < exclude_self_layers; }
  // RopeAttrs::rotary_dims for layer l: 0 on the position-free layers, else rotary_dims.
  int layer_rotary_dims(int l) const {
    return nope_interval > 0 && (l + 1) % nope_interval == 0 ? 0 : rotary_dims;
  }
  // Columns the embedding sees: F, or F − 1 + 2·periods with a Fourier feature.
  int input_width() const {
    return fourier_feature < 0 ? features : features - 1 + 2 * static_cast<int>(fourier_periods.size());
  }
  absl::Status Validate() const;
  std::string ToJson() const;
  static absl::StatusOr<ModelConfig> FromJson(const std::string& json);
};

}  // namespace flashtick
