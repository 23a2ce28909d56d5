// Sweep presets (see sweep_presets.h). The demo is the README's CPU sweep and the
// end-to-end test's (tests/sweep/sweep_planted_test): planted-cue days with go
// markers (train/sweep/go_cue.h) at lags 10, 24, 48 for arms N = 16, 32, 64, so arm
// N=16 sees one lag family, N=32 two and N=64 all three. The scale is what a
// two-layer width-32 model learns in a minute or two per arm on 2 CPU cores:
// measured (2026-11-29, flashtick_sweep, 1 thread) with 2 heads a model learned at
// most two offsets, and offsets beyond ~40 steps (lags 96, 160, 320) stayed at a
// coin's accuracy within that budget; 4 heads and 80 first-fold epochs learned all
// three. The `planted` preset is RESEARCH.md's full-scale sweep for the GPU.
#include "train/sweep/sweep_presets.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace flashtick {
namespace {

std::string Demo(const char* name, const char* generator) {
  return absl::StrCat(R"({
  "name": ")", name, R"(",
  "contexts": [16, 32, 64],
  "seeds": [1],
  "model": {"width": 32, "layers": 2, "heads": 4, "kv_heads": 4, "mlp_ratio": 2,
            "rope_theta": 10000},
  "optimizer": {"name": "adamw", "learning_rate": 0.01, "warmup_steps": 20,
                "min_lr_ratio": 0.1, "grad_clip_norm": 1.0, "weight_decay": 0.0,
                "tokens_per_step": 1024},
  "training": {"first_fold_epochs": 120, "epochs_per_fold": 2, "min_steps_per_fold": 2,
               "checkpoint_every_steps": 50},
  "data": {"synthetic": {"generator": ")", generator, R"(", "seed": 7, "days": 24,
                         "steps_per_day": 2048, "lags": [10, 24, 48],
                         "events_per_day": [40, 40, 40], "sigma_bps": 0.5,
                         "drift_bps": 2.0}},
  "labels": {"horizon": 4},
  "walk_forward": {"mode": "expanding", "train_days": 4, "test_days": 1},
  "cost_bps": 0.5,
  "gates": {"min_dsr": 0.95, "max_pbo": 0.10, "pbo_blocks": 16, "best_by": "sharpe"},
  "precision_check": {"enabled": true, "max_windows": 8},
  "device": "cpu"
})");
}

// One head of D = 64: the CUDA attention kernels take D ∈ {64, 128}, and this preset is
// for the GPU (4 heads of 16 could only run on the CPU backend).
std::string Planted(const char* name, const char* generator) {
  return absl::StrCat(R"({
  "name": ")", name, R"(",
  "contexts": [512, 4096, 32768],
  "seeds": [1],
  "model": {"width": 64, "layers": 2, "heads": 1, "kv_heads": 1, "mlp_ratio": 4},
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
  if (name == "demo") return Demo("demo", "planted_cue_go");
  if (name == "demo_null") return Demo("demo_null", "planted_cue_go_null");
  if (name == "planted") return Planted("planted", "planted_cue");
  if (name == "planted_null") return Planted("planted_null", "planted_cue_null");
  return absl::NotFoundError(absl::StrCat("no sweep preset '", name, "'; presets: ",
                                          absl::StrJoin(SweepPresetNames(), ", ")));
}

}  // namespace flashtick
