// Sweep configuration: every preset parses; defaults are the full-scale planted sweep's (docs/research/sweeps.md) (N ∈ {512,
// 4,096, 32,768}, DSR ≥ 0.95, PBO ≤ 0.10); ParseSweepConfig(ToJson(c)) == c; and
// every bad field is INVALID_ARGUMENT naming the field and the accepted values
// (a table of one bad field per case, plus several at once: all are listed).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

#include "absl/strings/str_cat.h"
#include "flashtick/v1/sweep_config.pb.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_presets.h"

namespace flashtick {
namespace {

TEST(SweepConfig, DefaultsAreTheProtocols) {
  auto c = ParseSweepConfig("{}");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->contexts, (std::vector<int64_t>{512, 4096, 32768}));
  EXPECT_DOUBLE_EQ(c->gates.min_dsr, 0.95);
  EXPECT_DOUBLE_EQ(c->gates.max_pbo, 0.10);
  EXPECT_EQ(c->gates.pbo_blocks, 16);
  EXPECT_FALSE(c->data.csv);
  EXPECT_EQ(c->data.synthetic.generator, "planted_cue");
  EXPECT_EQ(c->data.synthetic.lags, (std::vector<int64_t>{300, 3000, 15000}));
  // Same architecture and optimizer in every arm; tokens per step shared.
  EXPECT_EQ(c->ModelFor().max_context, 32768);
  EXPECT_EQ(c->BatchFor(512) * 512, c->optimizer.tokens_per_step);
  EXPECT_EQ(c->BatchFor(32768), 1);
  EXPECT_EQ(c->EvalStrideFor(4096), 512);
}

TEST(SweepConfig, PresetsParseAndRoundTrip) {
  for (const std::string& name : SweepPresetNames()) {
    auto text = SweepPresetJson(name);
    ASSERT_TRUE(text.ok()) << name;
    auto c = ParseSweepConfig(*text);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    const std::string again = SweepConfigToJson(*c);
    auto d = ParseSweepConfig(again);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(SweepConfigToJson(*d), again) << name;
  }
  EXPECT_EQ(SweepPresetJson("nope").status().code(), absl::StatusCode::kNotFound);
  auto demo = ParseSweepConfig(*SweepPresetJson("demo"));
  EXPECT_EQ(demo->contexts, (std::vector<int64_t>{16, 32, 64}));
  auto null_demo = ParseSweepConfig(*SweepPresetJson("demo_null"));
  EXPECT_EQ(null_demo->data.synthetic.generator, "planted_cue_keyed_null");
  // The GPU sweep: the research Ns and lags, the keyed generator, three seeds, a fixed
  // label α, a head dim with native CUDA kernels (D ∈ {64, 128}); the go-marker
  // twin (planted_small) keeps the model of planted_go.
  auto planted = ParseSweepConfig(*SweepPresetJson("planted"));
  ASSERT_TRUE(planted.ok()) << planted.status();
  EXPECT_EQ(planted->contexts, (std::vector<int64_t>{512, 4096, 32768}));
  EXPECT_EQ(planted->data.synthetic.lags, (std::vector<int64_t>{200, 2000, 10000}));
  // The design that passed on the H200 (docs/sweeps/keyed.md, eleventh session): keys a
  // whole spread apart, four layers, Fourier inputs, 60 test days.
  EXPECT_EQ(planted->data.synthetic.key_spread_step, 1.0);
  EXPECT_EQ(planted->model.layers, 4);
  EXPECT_EQ(planted->model.fourier_feature, 1);
  EXPECT_EQ(planted->data.synthetic.days - planted->walk_forward.train_days, 60);
  EXPECT_EQ(planted->training.validate_on, ValidateOn::kCalls);
  // Off unless asked for, and then not printed: configs committed before the field
  // existed print as they did.
  EXPECT_FALSE(planted->training.deterministic);
  EXPECT_EQ(SweepConfigToJson(*planted).find("deterministic"), std::string::npos);
  EXPECT_EQ(planted->training.stall_restarts, 0);
  EXPECT_EQ(SweepConfigToJson(*planted).find("stall_restarts"), std::string::npos);
  EXPECT_EQ(planted->training.stall_restart_repeat_tolerance, 0);
  EXPECT_EQ(planted->model.exclude_self_layers, 0);
  EXPECT_EQ(SweepConfigToJson(*planted).find("exclude_self_layers"), std::string::npos);
  EXPECT_EQ(planted->data.synthetic.steps_per_day, 23400);
  EXPECT_EQ(planted->data.synthetic.generator, "planted_cue_keyed");
  EXPECT_EQ(planted->seeds.size(), 3u);
  EXPECT_GT(planted->label_alpha_bps, 0);
  EXPECT_GT(planted->training.validation_days, 0);
  const int head_dim = planted->model.width / planted->model.heads;
  EXPECT_TRUE(head_dim == 64 || head_dim == 128) << head_dim;
  EXPECT_EQ(ParseSweepConfig(*SweepPresetJson("planted_null"))->data.synthetic.generator,
            "planted_cue_keyed_null");
  auto go = ParseSweepConfig(*SweepPresetJson("planted_go"));
  ASSERT_TRUE(go.ok()) << go.status();
  EXPECT_EQ(go->data.synthetic.generator, "planted_cue_go");
  auto small = ParseSweepConfig(*SweepPresetJson("planted_small_null"));
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->data.synthetic.generator, "planted_cue_go_null");
  EXPECT_EQ(small->model.width, go->model.width);
  EXPECT_EQ(small->model.heads, go->model.heads);
}

TEST(SweepConfig, KeyedFieldsEarlyStoppingAndFixedAlphaRoundTrip) {
  auto c = ParseSweepConfig(R"({"contexts": [16, 64], "labels": {"horizon": 4, "alpha_bps": 2.5},
    "walk_forward": {"train_days": 6, "test_days": 1},
    "training": {"validation_days": 2, "validate_every_steps": 7, "validation_batches": 3,
                 "patience": 4, "max_train_seconds": 12.5, "validate_on": "calls",
                 "deterministic": true, "stall_restarts": 2,
                 "stall_restart_repeat_tolerance": 0.1},
    "arms_per_gpu": 3,
    "model": {"fourier_feature": 1, "fourier_periods": [2, 8.5], "layers": 4, "nope_interval": 4,
              "exclude_self_layers": 1},
    "data": {"synthetic": {"generator": "planted_cue_keyed", "days": 10, "steps_per_day": 512,
                           "lags": [8, 40], "events_per_day": [5, 5], "keys": 12,
                           "key_window": 100, "key_lead": 1,
                           "cue_key_shift": 6.5, "cue_sign_return_bps": 2.5}}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->data.synthetic.key_lead, 1);
  EXPECT_EQ(c->data.synthetic.cue_key_shift, 6.5);
  EXPECT_EQ(c->data.synthetic.cue_sign_return_bps, 2.5);
  EXPECT_EQ(c->model.fourier_feature, 1);
  EXPECT_EQ(c->model.fourier_periods, (std::vector<double>{2.0, 8.5}));
  EXPECT_EQ(c->ModelFor().input_width(), 6 - 1 + 2 * 2);
  EXPECT_EQ(c->ModelFor().nope_interval, 4);
  EXPECT_EQ(c->ModelFor().layer_rotary_dims(3), 0);
  EXPECT_EQ(c->ModelFor().exclude_self_layers, 1);
  EXPECT_TRUE(c->ModelFor().layer_excludes_self(0));
  EXPECT_FALSE(c->ModelFor().layer_excludes_self(1));
  EXPECT_NE(SweepConfigToJson(*c).find("\"exclude_self_layers\": 1"), std::string::npos);
  EXPECT_EQ(c->label_alpha_bps, 2.5);
  EXPECT_EQ(c->training.validation_days, 2);
  EXPECT_EQ(c->training.validate_every_steps, 7);
  EXPECT_EQ(c->training.validation_batches, 3);
  EXPECT_EQ(c->training.patience, 4);
  EXPECT_EQ(c->training.max_train_seconds, 12.5);
  EXPECT_EQ(c->training.validate_on, ValidateOn::kCalls);
  EXPECT_TRUE(c->training.deterministic);
  EXPECT_NE(SweepConfigToJson(*c).find("\"deterministic\": true"), std::string::npos);
  EXPECT_EQ(c->training.stall_restarts, 2);
  EXPECT_NE(SweepConfigToJson(*c).find("\"stall_restarts\": 2"), std::string::npos);
  EXPECT_EQ(c->training.stall_restart_repeat_tolerance, 0.1);
  EXPECT_NE(SweepConfigToJson(*c).find("\"stall_restart_repeat_tolerance\": 0.1"),
            std::string::npos);
  EXPECT_EQ(c->arms_per_gpu, 3);
  EXPECT_EQ(c->data.synthetic.keys, 12);
  EXPECT_EQ(c->data.synthetic.key_window, 100);
  EXPECT_TRUE(c->data.synthetic.keyed());
  auto again = ParseSweepConfig(SweepConfigToJson(*c));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(SweepConfigToJson(*again), SweepConfigToJson(*c));
  // The Fourier fields come as a pair, with periods > 0.
  for (const char* model : {R"({"fourier_feature": 1})", R"({"fourier_periods": [2]})",
                            R"({"fourier_feature": 1, "fourier_periods": [0]})",
                            R"({"fourier_feature": 6, "fourier_periods": [2]})"}) {
    auto m = ParseSweepConfig(absl::StrCat(R"({"contexts": [16], "model": )", model, "}"));
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << model;
    EXPECT_NE(m.status().message().find("fourier"), std::string::npos) << m.status();
  }
  // Validation days must leave the first fold days to train on; keyed lags must fit.
  auto bad = ParseSweepConfig(R"({"contexts": [16, 64], "labels": {"horizon": 4},
    "walk_forward": {"train_days": 3, "test_days": 1},
    "training": {"validation_days": 3},
    "data": {"synthetic": {"generator": "planted_cue_keyed", "days": 10, "steps_per_day": 512,
                           "lags": [2, 600], "events_per_day": [5, 5]}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("training.validation_days 3"), std::string::npos)
      << bad.status();
  EXPECT_NE(bad.status().message().find("lag 2 must lie"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("lag 600 must lie"), std::string::npos) << bad.status();
}

TEST(SweepConfig, ProtobufJsonMappingForms) {
  // The canonical JSON mapping: lowerCamelCase names and quoted integers read as the
  // proto names and numbers do; an empty list or a null is the default.
  auto c = ParseSweepConfig(R"({"contexts": ["64", 512], "model": {"kvHeads": 2},
                                "seeds": [], "gates": null})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->contexts, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(c->model.kv_heads, 2);
  EXPECT_EQ(c->seeds, (std::vector<uint64_t>{1}));
  EXPECT_DOUBLE_EQ(c->gates.min_dsr, 0.95);
}

TEST(SweepConfig, JsonIsTheMessagesMapping) {
  // SweepConfigToJson is the message's JSON with the proto field names, every field
  // set: keys are exactly the schema's, integers are numbers, not strings.
  auto c = ParseSweepConfig(*SweepPresetJson("planted"));
  ASSERT_TRUE(c.ok()) << c.status();
  const nlohmann::json j = nlohmann::json::parse(SweepConfigToJson(*c));
  EXPECT_TRUE(j["contexts"][0].is_number_integer()) << j["contexts"];
  EXPECT_TRUE(j["data"]["synthetic"]["seed"].is_number_integer());
  EXPECT_TRUE(j["model"].contains("kv_heads"));
  EXPECT_TRUE(j["training"].contains("max_train_seconds"));
  const v1::SweepConfig m = SweepConfigToProto(*c);
  EXPECT_TRUE(m.model().has_nope_interval()) << "every scalar is set";
  auto back = SweepConfigFromProto(m);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(SweepConfigToJson(*back), SweepConfigToJson(*c));
}

TEST(SweepConfig, ContextsAreSortedShortestFirst) {
  auto c = ParseSweepConfig(R"({"contexts": [4096, 512, 32768]})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->contexts, (std::vector<int64_t>{512, 4096, 32768}));
}

TEST(SweepConfig, CsvSource) {
  auto c = ParseSweepConfig(R"({"contexts": [8, 64], "labels": {"horizon": 4},
    "data": {"csv": {"paths": ["a.csv"], "format": "bars", "instrument": "USDCHF",
    "session": {"open_second": 0, "step_seconds": 1800, "steps": 48,
                "clock_shift_seconds": 7200, "min_rows_in_session": 24}}}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->data.csv);
  EXPECT_EQ(c->data.csv_data.session.step_us, 1800LL * 1000000);
  EXPECT_EQ(c->data.csv_data.session.steps, 48);
  auto d = ParseSweepConfig(SweepConfigToJson(*c));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->data.csv_data.paths, c->data.csv_data.paths);
}

struct BadCase {
  const char* json;
  const char* expect;  // a substring of the message
};

class BadField : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadField, IsInvalidArgumentNamingTheField) {
  auto c = ParseSweepConfig(GetParam().json);
  ASSERT_FALSE(c.ok()) << GetParam().json;
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(GetParam().expect), std::string::npos)
      << "message: " << c.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadField,
    ::testing::Values(
        BadCase{"not json", "not the JSON of flashtick.v1.SweepConfig"},
        BadCase{"[1, 2]", "Root element must be a message"},
        BadCase{R"({"contexts": [[512]]})", "a list inside a list"},
        BadCase{R"({"contexts": [512, 4096, 8192, 16384, 32768, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]})",
                "contexts must be a list of 1 to 16 integers, got 17"},
        BadCase{R"({"contexts": [512, 0]})", "contexts[1] must be an integer in [1, 1048576]"},
        BadCase{R"({"contexts": [512, 512]})", "contexts must be distinct"},
        BadCase{R"({"contexts": [9999999999]})", "(contexts[0]): invalid value 9999999999"},
        BadCase{R"({"seeds": [-1]})", "(seeds[0]): invalid value -1 for type TYPE_UINT32"},
        BadCase{R"({"seeds": [1, 1]})", "seeds must be distinct"},
        BadCase{R"({"name": ""})", "name must not be empty"},
        BadCase{R"({"learning_rate": 0.1})", "learning_rate: Cannot find field"},
        BadCase{R"({"optimizer": {"learning_rat": 0.1}})", "(optimizer) learning_rat: Cannot find field"},
        BadCase{R"({"optimizer": {"name": "sgd"}})", "optimizer.name must be one of adamw, sophia_h"},
        BadCase{R"({"optimizer": {"learning_rate": "fast"}})",
                "(optimizer.learning_rate): invalid value \"fast\" for type TYPE_DOUBLE"},
        BadCase{R"({"optimizer": {"learning_rate": 0}})", "optimizer.learning_rate must be a number in (0"},
        BadCase{R"({"optimizer": {"beta1": 1.0}})", "beta2 must be below 1"},
        BadCase{R"({"optimizer": {"tokens_per_step": 0}})", "optimizer.tokens_per_step must be an integer in [1"},
        BadCase{R"({"optimizer": {"tokens_per_step": 8192}})",
                "optimizer.tokens_per_step 8192 is not a multiple of N=32768"},
        BadCase{R"({"model": {"width": 30, "heads": 4}})", "model: "},
        BadCase{R"({"model": {"layers": 2.5}})", "(model.layers): invalid value 2.5 for type TYPE_INT32"},
        BadCase{R"({"model": {"layers": 2, "nope_interval": 3}})", "model.nope_interval must be at most layers"},
        BadCase{R"({"model": {"layers": 2, "exclude_self_layers": 3}})",
                "model.exclude_self_layers must be at most layers"},
        BadCase{R"({"training": {"eval_stride": 1000}})", "training.eval_stride 1000 exceeds the context N=512"},
        BadCase{R"({"training": {"max_steps_per_fold": 1, "min_steps_per_fold": 5}})",
                "training.max_steps_per_fold must be 0"},
        BadCase{R"({"training": {"validate_on": "events"}})",
                "training.validate_on must be one of all, calls"},
        BadCase{R"({"training": {"validate_on": "calls"}})",
                "training.validate_on \"calls\" needs training.validation_days > 0"},
        BadCase{R"({"training": {"restarts": 2, "restart_steps": 100}})",
                "training.restarts > 1 chooses a start on the validation days"},
        BadCase{R"({"training": {"restarts": 2, "validation_days": 1}})",
                "training.restart_steps must be at least 1 when restarts > 1"},
        BadCase{R"({"training": {"restarts": 17}})", "training.restarts must be an integer in [1, 16]"},
        BadCase{R"({"training": {"restarts": 2, "restart_steps": 10, "validation_days": 1},
                    "replicas_per_arm": 2})",
                "cannot be combined with replicas_per_arm > 1"},
        BadCase{R"({"training": {"stall_restarts": 1}})",
                "training.stall_restarts > 0 restarts a start whose validation loss stalls: it "
                "needs training.validation_days > 0"},
        BadCase{R"({"training": {"stall_restarts": -1, "validation_days": 1}})",
                "training.stall_restarts must be an integer in [0, 16]"},
        BadCase{R"({"training": {"stall_restarts": 17, "validation_days": 1}})",
                "training.stall_restarts must be an integer in [0, 16]"},
        BadCase{R"({"training": {"stall_restarts": 1, "validation_days": 1, "restarts": 2,
                                 "restart_steps": 10}})",
                "training.stall_restarts > 0 cannot be combined with training.restarts > 1"},
        BadCase{R"({"training": {"stall_restart_repeat_tolerance": 0.1}})",
                "training.stall_restart_repeat_tolerance ends stall restarts early: it needs "
                "training.stall_restarts > 0"},
        BadCase{R"({"training": {"stall_restarts": 1, "validation_days": 1,
                                 "stall_restart_repeat_tolerance": 1.5}})",
                "training.stall_restart_repeat_tolerance must be a number in [0, 1]"},
        BadCase{R"({"training": {"stall_restarts": 1, "validation_days": 1},
                    "replicas_per_arm": 2})",
                "training.stall_restarts > 0 runs one trainer per arm"},
        BadCase{R"({"training": {"validate_on": "calls", "validation_days": 1},
                    "data": {"csv": {"paths": ["x"]}}})",
                "training.validate_on \"calls\" needs a planted-cue generator"},
        BadCase{R"({"data": {"synthetic": {"generator": "gbm"}}})",
                "data.synthetic.generator must be one of planted_cue, planted_cue_null"},
        BadCase{R"({"data": {"synthetic": {}, "csv": {"paths": ["x"]}}})",
                "oneof field 'source' is already set"},
        BadCase{R"({"data": {"csv": {}}})", "data.csv.paths is required"},
        BadCase{R"({"data": {"csv": {"paths": ["x"], "format": "ticks"}}})",
                "data.csv.format must be one of quotes, bars"},
        BadCase{R"({"data": {"synthetic": {"days": 3}}, "walk_forward": {"train_days": 4}})",
                "data.synthetic.days 3 < walk_forward.train_days + test_days = 5"},
        BadCase{R"({"data": {"synthetic": {"lags": [50]}}})", "lag 50 must be ≥ labels.horizon + 4"},
        BadCase{R"({"data": {"synthetic": {"steps_per_day": 4000}}})",
                "lag 15000 + horizon 100 does not fit in a day of 4000 steps"},
        BadCase{R"({"data": {"synthetic": {"hurst": 1.0}}})", "hurst must be below 1"},
        BadCase{R"({"labels": {"horizon": 0}})", "labels.horizon must be an integer in [1"},
        BadCase{R"({"labels": {"alpha": 0.1}})", "(labels) alpha: Cannot find field"},
        BadCase{R"({"walk_forward": {"mode": "kfold"}})", "walk_forward.mode must be one of expanding, rolling"},
        BadCase{R"({"walk_forward": {"mode": "rolling"}})", "set walk_forward.warm_start false"},
        BadCase{R"({"cost_bps": -1})", "cost_bps must be a number in [0"},
        BadCase{R"({"gates": {"min_dsr": 1.5}})", "gates.min_dsr must be a number in [0, 1]"},
        BadCase{R"({"gates": {"pbo_blocks": 7}})", "gates.pbo_blocks must be even"},
        BadCase{R"({"gates": {"best_by": "profit"}})", "gates.best_by must be one of sharpe"},
        BadCase{R"({"device": "tpu"})", "device must be one of auto, cpu, cuda"},
        BadCase{R"({"max_parallel_arms": 0})", "max_parallel_arms must be an integer in [1, 64]"}));

TEST(SweepConfig, EveryBadFieldIsListedAtOnce) {
  // Values the schema's types accept but the ranges and choices do not: all listed.
  // (A wrong type stops protobuf's JSON parser at that field, so it comes alone.)
  auto c = ParseSweepConfig(R"({"cost_bps": -1, "device": "tpu", "optimizer": {"name": "sgd"}})");
  ASSERT_FALSE(c.ok());
  const std::string m(c.status().message());
  EXPECT_NE(m.find("cost_bps"), std::string::npos) << m;
  EXPECT_NE(m.find("device"), std::string::npos) << m;
  EXPECT_NE(m.find("optimizer.name"), std::string::npos) << m;
}

TEST(SweepConfig, SurvivesGarbage) {
  // A few hostile inputs the fuzz target will also see: never a crash.
  for (const char* text : {"", "{", "{\"contexts\": [1e400]}", "{\"seeds\": [18446744073709551616]}",
                           "{\"model\": []}", "{\"data\": {\"csv\": {\"paths\": [\"\"]}}}",
                           "{\"contexts\": [9223372036854775807]}", "null", "\"str\"", "1"}) {
    auto c = ParseSweepConfig(text);
    EXPECT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}


TEST(SweepConfig, NegativeZeroReadsAsZero) {
  // JSON allows -0 where a field's range starts at 0. The reader stores 0, so the
  // config writes the same JSON however often it is read and written again (the fuzz
  // target found -0 in weight_decay printing "-0" once and then differently).
  auto c = ParseSweepConfig(R"({"optimizer": {"weight_decay": -0.0},
                                "training": {"max_train_seconds": -0, "epochs_per_fold": -0.0},
                                "cost_bps": -0})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(std::signbit(c->optimizer.hyper.weight_decay));
  EXPECT_FALSE(std::signbit(c->training.max_train_seconds));
  EXPECT_FALSE(std::signbit(c->training.epochs_per_fold));
  EXPECT_FALSE(std::signbit(c->cost_bps));
  const std::string once = SweepConfigToJson(*c);
  EXPECT_EQ(once.find(": -0,"), std::string::npos) << once;
  auto again = ParseSweepConfig(once);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(SweepConfigToJson(*again), once);
}

// The sweep files committed for the GPU (bench/sweep/configs, bench/sweep/screen) are
// what the device calls run, and no CI job runs them: each must parse here, so a field
// renamed in the code fails now rather than on a lent GPU. A null twin (name ending in
// _null) must differ from its planted sweep only in its name and the generator's _null
// suffix, or the twin would not test the same design (docs/research/sweeps.md).
std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SweepConfig, CommittedSweepFilesParse) {
  const std::filesystem::path root = FLASHTICK_SOURCE_DIR;
  int parsed = 0, twins = 0;
  for (const char* dir : {"bench/sweep/configs", "bench/sweep/screen"}) {
    for (const auto& entry : std::filesystem::directory_iterator(root / dir)) {
      if (entry.path().extension() != ".json") continue;
      const std::string text = ReadFile(entry.path());
      auto c = ParseSweepConfig(text);
      ASSERT_TRUE(c.ok()) << entry.path() << ": " << c.status();
      ++parsed;
      const std::string stem = entry.path().stem().string();
      const std::string suffix = "_null";
      if (stem.size() <= suffix.size() || stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const auto planted = entry.path().parent_path() / (stem.substr(0, stem.size() - suffix.size()) + ".json");
      if (!std::filesystem::exists(planted)) continue;
      nlohmann::json null_json = nlohmann::json::parse(text), planted_json = nlohmann::json::parse(ReadFile(planted));
      EXPECT_EQ(null_json["data"]["synthetic"]["generator"].get<std::string>(),
                planted_json["data"]["synthetic"]["generator"].get<std::string>() + "_null")
          << entry.path();
      for (nlohmann::json* j : {&null_json, &planted_json}) {
        j->erase("name");
        (*j)["data"]["synthetic"].erase("generator");
      }
      EXPECT_EQ(null_json, planted_json) << entry.path() << " is not " << planted << "'s twin";
      ++twins;
    }
  }
  EXPECT_GE(parsed, 8);
  EXPECT_GE(twins, 3);
}

}  // namespace
}  // namespace flashtick
