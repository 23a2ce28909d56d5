// Sweep presets (see sweep_presets.h). The demo scales RESEARCH.md's planted-cue
// sweep down by 32: N = 512, 4,096, 32,768 → 16, 128, 512 and lags 300, 3,000,
// 15,000 → 10, 96, 320 (each lag well inside the one arm that should see it and
// beyond the shorter arms), with a short label horizon and a drift strong enough
// that a tiny model learns the cue in a few hundred CPU steps.
#include "train/sweep/sweep_presets.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace flashtick {
namespace {

std::string Demo(const char* name, const char* generator) {
  return absl::StrCat(R"({
  "name": ")", name, R"(",
  "contexts": [16, 128, 512],
  "seeds": [1],
  "model": {"width": 32, "layers": 2, "heads": 2, "kv_heads": 2, "mlp_ratio": 2,
            "rope_theta": 1000},
  "optimizer": {"name": "adamw", "learning_rate": 0.003, "warmup_steps": 20,
                "min_lr_ratio": 0.1, "grad_clip_norm": 1.0, "weight_decay": 0.0,
                "tokens_per_step": 4096},
  "training": {"first_fold_epochs": 40, "epochs_per_fold": 2, "min_steps_per_fold": 2,
               "checkpoint_every_steps": 50},
  "data": {"synthetic": {"generator": ")", generator, R"(", "seed": 7, "days": 24,
                         "steps_per_day": 2048, "lags": [10, 96, 320],
                         "events_per_lag_per_day": 12, "sigma_bps": 0.5,
                         "drift_bps": 2.0}},
  "labels": {"horizon": 4},
  "walk_forward": {"mode": "expanding", "train_days": 4, "test_days": 1},
  "cost_bps": 0.5,
  "gates": {"min_dsr": 0.95, "max_pbo": 0.10, "pbo_blocks": 16, "best_by": "sharpe"},
  "precision_check": {"enabled": true, "max_windows": 8},
  "device": "cpu"
})");
}

std::string Planted(const char* name, const char* generator) {
  return absl::StrCat(R"({
  "name": ")", name, R"(",
  "contexts": [512, 4096, 32768],
  "seeds": [1],
  "model": {"width": 64, "layers": 2, "heads": 4, "kv_heads": 4, "mlp_ratio": 4},
  "optimizer": {"name": "adamw", "learning_rate": 0.001, "warmup_steps": 50,
                "tokens_per_step": 65536},
  "training": {"first_fold_epochs": 4, "epochs_per_fold": 1, "checkpoint_every_steps": 100},
  "data": {"synthetic": {"generator": ")", generator, R"(", "seed": 7, "days": 24,
                         "steps_per_day": 23400, "lags": [300, 3000, 15000],
                         "events_per_lag_per_day": 6}},
  "labels": {"horizon": 100},
  "walk_forward": {"mode": "expanding", "train_days": 4, "test_days": 1},
  "cost_bps": 0.5,
  "device": "auto"
})");
}

}  // namespace

std::vector<std::string> SweepPresetNames() {
  return {"demo", "demo_null", "planted", "planted_null"};
}

absl::StatusOr<std::string> SweepPresetJson(const std::string& name) {
  if (name == "demo") return Demo("demo", "planted_cue");
  if (name == "demo_null") return Demo("demo_null", "planted_cue_null");
  if (name == "planted") return Planted("planted", "planted_cue");
  if (name == "planted_null") return Planted("planted_null", "planted_cue_null");
  return absl::NotFoundError(absl::StrCat("no sweep preset '", name, "'; presets: ",
                                          absl::StrJoin(SweepPresetNames(), ", ")));
}

}  // namespace flashtick
