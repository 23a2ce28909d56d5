// The tests' small CPU sweep: two arms (N = 8 and 32) of a width-8, one-layer model on
// short planted_cue days (lags 6 and 24), seconds on two cores. One definition, so the
// engine, service and CLI tests run the same sweep; a test overrides the fields it is
// about (training, days, seed, gates) on the returned JSON.
#pragma once

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace flashtick {

inline nlohmann::json TinySweepJson(const std::string& name) {
  return nlohmann::json{
      {"name", name},
      {"contexts", {8, 32}},
      {"model", {{"width", 8}, {"layers", 1}, {"heads", 2}, {"kv_heads", 2}, {"mlp_ratio", 2}}},
      {"optimizer", {{"learning_rate", 0.003}, {"warmup_steps", 2}, {"tokens_per_step", 256}}},
      {"training",
       {{"first_fold_epochs", 2}, {"epochs_per_fold", 1}, {"checkpoint_every_steps", 5}}},
      {"data",
       {{"synthetic",
         {{"generator", "planted_cue"}, {"seed", 3}, {"days", 8}, {"steps_per_day", 256},
          {"lags", {6, 24}}, {"events_per_lag_per_day", 6}, {"drift_bps", 1.0}}}}},
      {"labels", {{"horizon", 2}}},
      {"walk_forward", {{"train_days", 3}, {"test_days", 1}}},
      {"gates", {{"pbo_blocks", 4}}},
      {"device", "cpu"},
      {"cpu_threads", 1}};
}

// The engine tests' variant: ten days of seed 5, PBO over 6 blocks, no precision check,
// and `training` in place of the default.
inline nlohmann::json TinyEngineSweepJson(const std::string& name, nlohmann::json training) {
  nlohmann::json j = TinySweepJson(name);
  j["training"] = std::move(training);
  j["data"]["synthetic"]["seed"] = 5;
  j["data"]["synthetic"]["days"] = 10;
  j["gates"]["pbo_blocks"] = 6;
  j["precision_check"] = {{"enabled", false}};
  return j;
}

}  // namespace flashtick
