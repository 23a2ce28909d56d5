// ModelConfig validation and JSON (nlohmann-json) round trip.
#include "model/config.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace flashtick {

absl::Status ModelConfig::Validate() const {
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat("model config: ", parts...)); };
  if (features < 1) return bad("features must be >= 1, got ", features);
  if (width < 1 || heads < 1 || width % heads != 0)
    return bad("width (", width, ") must be a positive multiple of heads (", heads, ")");
  if (kv_heads < 1 || heads % kv_heads != 0)
    return bad("heads (", heads, ") must be a multiple of kv_heads (", kv_heads, ")");
  if (head_dim() % 2 != 0) return bad("head dim must be even for rotary positions, got ", head_dim());
  if (layers < 1) return bad("layers must be >= 1, got ", layers);
  if (mlp_ratio < 1) return bad("mlp_ratio must be >= 1, got ", mlp_ratio);
  if (classes < 2) return bad("classes must be >= 2, got ", classes);
  if (max_context < 1) return bad("max_context must be >= 1, got ", max_context);
  if (!(rope_theta > 0)) return bad("rope_theta must be > 0");
  if (rotary_dims < -1 || rotary_dims > head_dim() || (rotary_dims >= 0 && rotary_dims % 2 != 0))
    return bad("rotary_dims must be -1 (the whole head) or even in [0, head dim = ", head_dim(),
               "], got ", rotary_dims);
  if (nope_interval < 0 || nope_interval > layers)
    return bad("nope_interval must be 0 (every layer rotated) or in [1, layers = ", layers,
               "], got ", nope_interval);
  if (exclude_self_layers < 0 || exclude_self_layers > layers)
    return bad("exclude_self_layers must be in [0, layers = ", layers, "], got ", exclude_self_layers);
  if (!(layernorm_eps > 0)) return bad("layernorm_eps must be > 0");
  if (fourier_feature < -1 || fourier_feature >= features)
    return bad("fourier_feature must be -1 (none) or a column in [0, features = ", features,
               "), got ", fourier_feature);
  if (fourier_feature < 0 && !fourier_periods.empty())
    return bad("fourier_periods given without a fourier_feature column");
  if (fourier_feature >= 0 && (fourier_periods.empty() || fourier_periods.size() > kMaxFourierPeriods))
    return bad("fourier_periods must hold 1 to ", kMaxFourierPeriods, " periods, got ",
               fourier_periods.size());
  for (float p : fourier_periods)
    if (!(p > 0) || !std::isfinite(p)) return bad("fourier_periods must be finite and > 0, got ", p);
  return absl::OkStatus();
}

std::string ModelConfig::ToJson() const {
  nlohmann::json j = {{"name", name},         {"features", features},   {"width", width},
                      {"layers", layers},     {"heads", heads},         {"kv_heads", kv_heads},
                      {"mlp_ratio", mlp_ratio}, {"classes", classes},   {"max_context", max_context},
                      {"rope_theta", rope_theta}, {"rotary_dims", rotary_dims},
                      {"layernorm_eps", layernorm_eps}};
  if (nope_interval > 0) j["nope_interval"] = nope_interval;
  if (exclude_self_layers > 0) j["exclude_self_layers"] = exclude_self_layers;
  if (fourier_feature >= 0) {
    j["fourier_feature"] = fourier_feature;
    j["fourier_periods"] = fourier_periods;
  }
  return j.dump(2);
}

absl::StatusOr<ModelConfig> ModelConfig::FromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return absl::InvalidArgumentError("model config: config.json is not a JSON object");
  ModelConfig c;
  auto get = [&](const char* key, auto& field) -> absl::Status {
    if (!j.contains(key)) return absl::OkStatus();  // keep the default
    const auto& v = j[key];
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) return absl::InvalidArgumentError(absl::StrCat("model config: '", key, "' must be a string"));
      field = v.get<std::string>();
    } else {
      if (!v.is_number()) return absl::InvalidArgumentError(absl::StrCat("model config: '", key, "' must be a number"));
      field = v.get<T>();
    }
    return absl::OkStatus();
  };
  for (auto s : {get("name", c.name), get("features", c.features), get("width", c.width),
                 get("layers", c.layers), get("heads", c.heads), get("kv_heads", c.kv_heads),
                 get("mlp_ratio", c.mlp_ratio), get("classes", c.classes),
                 get("max_context", c.max_context), get("rope_theta", c.rope_theta),
                 get("rotary_dims", c.rotary_dims), get("layernorm_eps", c.layernorm_eps)}) {
    if (!s.ok()) return s;
  }
  if (absl::Status s = get("fourier_feature", c.fourier_feature); !s.ok()) return s;
  if (absl::Status s = get("nope_interval", c.nope_interval); !s.ok()) return s;
  if (absl::Status s = get("exclude_self_layers", c.exclude_self_layers); !s.ok()) return s;
  if (j.contains("fourier_periods")) {
    const auto& v = j["fourier_periods"];
    if (!v.is_array() || v.size() > kMaxFourierPeriods)
      return absl::InvalidArgumentError(absl::StrCat(
          "model config: 'fourier_periods' must be an array of at most ", kMaxFourierPeriods, " numbers"));
    for (const auto& p : v) {
      if (!p.is_number())
        return absl::InvalidArgumentError("model config: 'fourier_periods' must hold numbers");
      c.fourier_periods.push_back(p.get<float>());
    }
  }
  if (absl::Status s = c.Validate(); !s.ok()) return s;
  return c;
}

}  // namespace flashtick
