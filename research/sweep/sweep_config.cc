// SweepConfig parsing, validation and JSON (see sweep_config.h). Reading is in
// JsonFields (types and ranges); the rules that tie fields together are in
// CrossCheck. Messages name the field as a path ("walk_forward.train_days").
#include "research/sweep/sweep_config.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ticks/timestamp.h"
#include "research/sweep/json_fields.h"

namespace flashtick {
namespace {

using nlohmann::json;

constexpr int64_t kMaxContext = int64_t{1} << 20;
constexpr int64_t kMaxTotalSteps = int64_t{1} << 31;  // ticks held in memory (×6 floats)
constexpr int kMotifSteps = 4;                        // planted_cue.h: [A,0,A,0]
const std::vector<std::string> kGenerators = {
    "planted_cue", "planted_cue_null", "planted_cue_tagged", "planted_cue_tagged_null",
    "planted_cue_go", "planted_cue_go_null", "planted_cue_keyed", "planted_cue_keyed_null",
    "regime_switching", "long_memory", "hawkes"};

BestBy ParseBestBy(const std::string& s) {
  if (s == "accuracy") return BestBy::kAccuracy;
  if (s == "macro_f1") return BestBy::kMacroF1;
  if (s == "log_loss") return BestBy::kLogLoss;
  return BestBy::kSharpe;
}

void ReadSynthetic(JsonFields f, SyntheticDataConfig* s) {
  f.String("generator", &s->generator, kGenerators);
  f.Uint("seed", &s->seed);
  f.Int("days", 2, 100000, &s->days);
  f.Int("steps_per_day", int64_t{16}, int64_t{1} << 24, &s->steps_per_day);
  f.Double("spread_bps", 0, 1e4, &s->spread_bps, /*lo_open=*/true);
  f.IntList("lags", 1, kMaxContext * 4, 1, 16, &s->lags);
  f.Int("events_per_lag_per_day", 0, 100000, &s->events_per_lag_per_day);
  f.IntList("events_per_day", 0, 100000, 0, 16, &s->events_per_day);
  f.Double("sigma_bps", 0, 1e4, &s->sigma_bps);
  f.Double("drift_bps", 0, 1e4, &s->drift_bps);
  f.Double("motif_amplitude", 0, 1e9, &s->motif_amplitude, true);
  f.Double("flow_noise", 0, 1e9, &s->flow_noise);
  f.Bool("cross_day", &s->cross_day);
  f.Double("tag_ratio", 0, 1e6, &s->tag_ratio, true);
  f.Int("keys", 1, 1024, &s->keys);
  f.Int("key_window", int64_t{0}, kMaxContext * 4, &s->key_window);
  f.Double("key_spread_step", 0, 1e4, &s->key_spread_step, true);
  f.Int("key_lead", int64_t{0}, int64_t{1000}, &s->key_lead);
  f.Double("cue_key_shift", 0, 1e4, &s->cue_key_shift);
  f.Double("cue_sign_return_bps", 0, 1e4, &s->cue_sign_return_bps);
  f.Double("flip_prob", 0, 1, &s->flip_prob, true);
  f.Double("mu_over_sigma", 0, 100, &s->mu_over_sigma);
  f.Double("hurst", 0, 1, &s->hurst, true);
  if (s->hurst >= 1) f.Error("hurst", "must be below 1");
  f.Double("hawkes_mu", 0, 1e6, &s->hawkes_mu, true);
  f.Double("hawkes_alpha", 0, 1e6, &s->hawkes_alpha);
  f.Double("hawkes_beta", 0, 1e6, &s->hawkes_beta, true);
  f.Double("impact_bps", 0, 1e4, &s->impact_bps);
  f.Finish();
}

void ReadCsv(JsonFields f, CsvDataConfig* c) {
  f.StringList("paths", 1, 10000, &c->paths);
  if (!f.Has("paths")) f.Error("paths", "is required: the CSV files on the server's data volume");
  f.String("format", &c->format, {"quotes", "bars"});
  f.String("instrument", &c->instrument, {}, 64);
  JsonFields s = f.Object("session");
  s.Int("open_second", int64_t{0}, int64_t{86399}, &c->session.open_second);
  double step_seconds = static_cast<double>(c->session.step_us) / kMicrosPerSecond;
  s.Double("step_seconds", 1e-6, 86400, &step_seconds, true);
  c->session.step_us = static_cast<int64_t>(step_seconds * kMicrosPerSecond + 0.5);
  s.Int("steps", int64_t{1}, int64_t{1} << 24, &c->session.steps);
  s.Int("clock_shift_seconds", int64_t{-86400}, int64_t{86400}, &c->session.clock_shift_seconds);
  s.Bool("weekdays_only", &c->session.weekdays_only);
  s.Int("min_rows_in_session", int64_t{1}, int64_t{1} << 30, &c->session.min_rows_in_session);
  s.Finish();
  f.Int("first_day", 0, 10000000, &c->first_day);
  f.Int("max_days", 0, 10000000, &c->max_days);
  f.Finish();
}

void ReadOptimizer(JsonFields f, SweepOptimizerConfig* o) {
  std::string name = OptimizerKindName(o->kind);
  f.String("name", &name, {"adamw", "sophia_h"});
  const OptimizerKind kind =
      name == "sophia_h" ? OptimizerKind::kSophiaH : OptimizerKind::kAdamW;
  if (kind != o->kind) {  // another optimizer: start from its published defaults
    o->kind = kind;
    o->hyper = OptimizerHyper::Defaults(kind);
  }
  f.Double("learning_rate", 0, 10, &o->learning_rate, true);
  f.Double("beta1", 0, 1, &o->hyper.beta1);
  f.Double("beta2", 0, 1, &o->hyper.beta2);
  f.Double("epsilon", 0, 1, &o->hyper.eps, true);
  f.Double("weight_decay", 0, 10, &o->hyper.weight_decay);
  f.Double("rho", 0, 100, &o->hyper.rho, true);
  f.Int("warmup_steps", int64_t{0}, int64_t{1} << 30, &o->warmup_steps);
  f.Double("min_lr_ratio", 0, 1, &o->min_lr_ratio);
  f.Double("grad_clip_norm", 0, 1e9, &o->grad_clip_norm);
  f.Int("hessian_interval", int64_t{1}, int64_t{1} << 20, &o->hessian_interval);
  f.Int("tokens_per_step", int64_t{1}, int64_t{1} << 28, &o->tokens_per_step);
  f.Int("micro_batch", int64_t{0}, int64_t{1} << 20, &o->micro_batch);
  f.Finish();
  if (o->hyper.beta1 >= 1 || o->hyper.beta2 >= 1) {
    f.Error("beta1", "and beta2 must be below 1");
  }
}

void ReadTraining(JsonFields f, SweepTrainingConfig* t) {
  f.Double("first_fold_epochs", 0, 1e4, &t->first_fold_epochs, true);
  f.Double("epochs_per_fold", 0, 1e4, &t->epochs_per_fold);
  f.Int("min_steps_per_fold", int64_t{0}, int64_t{1} << 30, &t->min_steps_per_fold);
  f.Int("max_steps_per_fold", int64_t{0}, int64_t{1} << 30, &t->max_steps_per_fold);
  f.Int("checkpoint_every_steps", int64_t{1}, int64_t{1} << 30, &t->checkpoint_every_steps);
  f.Int("eval_stride", int64_t{0}, kMaxContext, &t->eval_stride);
  f.Int("validation_days", 0, 100000, &t->validation_days);
  f.Int("validate_every_steps", int64_t{1}, int64_t{1} << 30, &t->validate_every_steps);
  f.Int("validation_batches", 1, 1024, &t->validation_batches);
  f.Int("patience", 1, 1 << 20, &t->patience);
  f.Int("early_stop_min_steps", int64_t{0}, int64_t{1} << 30, &t->early_stop_min_steps);
  std::string on = ValidateOnName(t->validate_on);
  f.String("validate_on", &on, {"all", "calls"});
  t->validate_on = on == "calls" ? ValidateOn::kCalls : ValidateOn::kAll;
  f.Int("context_warmup_steps", int64_t{0}, int64_t{1} << 30, &t->context_warmup_steps);
  f.Int("context_warmup_start", int64_t{1}, kMaxContext, &t->context_warmup_start);
  f.Double("max_train_seconds", 0, 1e7, &t->max_train_seconds);
  f.Finish();
  if (t->max_steps_per_fold > 0 && t->max_steps_per_fold < t->min_steps_per_fold) {
    f.Error("max_steps_per_fold", "must be 0 (no cap) or ≥ min_steps_per_fold");
  }
}

// Rules between fields, after every field has its value.
void CrossCheck(const SweepConfig& c, JsonErrors* e) {
  std::set<int64_t> ns(c.contexts.begin(), c.contexts.end());
  if (ns.size() != c.contexts.size()) e->Add("contexts must be distinct (one arm per N)");
  std::set<uint64_t> seeds(c.seeds.begin(), c.seeds.end());
  if (seeds.size() != c.seeds.size()) e->Add("seeds must be distinct");
  const absl::Status model = c.ModelFor().Validate();
  if (!model.ok()) e->Add(absl::StrCat("model: ", model.message()));
  for (int64_t n : c.contexts) {
    if (c.optimizer.tokens_per_step % n != 0) {
      e->Add(absl::StrCat("optimizer.tokens_per_step ", c.optimizer.tokens_per_step,
                          " is not a multiple of N=", n,
                          ": every arm must take the same tokens per step (B·N)"));
    }
    if ((c.optimizer.tokens_per_step / n) % c.replicas_per_arm != 0) {
      e->Add(absl::StrCat("replicas_per_arm ", c.replicas_per_arm, " does not divide the batch ",
                          c.optimizer.tokens_per_step / n, " of N=", n,
                          " (tokens_per_step / N sequences are split among the replicas)"));
    }
    if (c.training.eval_stride > n) {
      e->Add(absl::StrCat("training.eval_stride ", c.training.eval_stride,
                          " exceeds the context N=", n, "; use at most the smallest N"));
    }
  }
  if (c.walk_forward.mode == SplitMode::kRolling && c.warm_start) {
    e->Add("walk_forward.mode rolling forgets old days but a warm-started model remembers "
           "them; set walk_forward.warm_start false");
  }
  if (c.training.validate_on == ValidateOn::kCalls && (c.data.csv || !c.data.synthetic.planted())) {
    e->Add("training.validate_on \"calls\" needs a planted-cue generator: only its events "
           "have call steps");
  }
  if (c.training.validate_on == ValidateOn::kCalls && c.training.validation_days == 0) {
    e->Add("training.validate_on \"calls\" needs training.validation_days > 0 (no "
           "validation days, no validation)");
  }
  if (!c.data.csv) {
    const SyntheticDataConfig& s = c.data.synthetic;
    if (2 * c.horizon + 1 >= s.steps_per_day) {
      e->Add(absl::StrCat("labels.horizon ", c.horizon, " leaves no labelled step in a day of ",
                          s.steps_per_day, " steps (need 2k + 1 < steps_per_day)"));
    }
    if (c.training.validation_days >= c.walk_forward.train_days) {
      e->Add(absl::StrCat("training.validation_days ", c.training.validation_days,
                          " must be below walk_forward.train_days ", c.walk_forward.train_days,
                          " (the first fold must keep days to train on)"));
    }
    const int need = c.walk_forward.train_days + c.walk_forward.test_days;
    if (s.days < need) {
      e->Add(absl::StrCat("data.synthetic.days ", s.days, " < walk_forward.train_days + test_days = ",
                          need, ": no fold to test"));
    }
    if (static_cast<int64_t>(s.days) * s.steps_per_day > kMaxTotalSteps) {
      e->Add(absl::StrCat("data.synthetic: days × steps_per_day is above ", kMaxTotalSteps));
    }
    if (!s.events_per_day.empty() &&
        (!(s.go() || s.keyed()) || s.events_per_day.size() != s.lags.size())) {
      e->Add(absl::StrCat("data.synthetic.events_per_day: ", s.events_per_day.size(),
                          " counts; give one per lag, with the planted_cue_go or "
                          "planted_cue_keyed generator only"));
    }
    if ((s.go() || s.keyed()) && s.cross_day) {
      e->Add(absl::StrCat("data.synthetic.cross_day: the ", s.generator,
                          " generator keeps every event in its day"));
    }
    if (s.keyed()) {  // keyed_cue.h: the go is labelled and differs from the cue
      for (int64_t lag : s.lags) {
        if (lag < std::max<int64_t>(2, c.horizon) || lag + c.horizon >= s.steps_per_day) {
          e->Add(absl::StrCat("data.synthetic.lags: lag ", lag, " must lie in [max(2, k), "
                              "steps_per_day − k) for the keyed cue"));
        }
      }
    } else if (s.planted()) {
      for (int64_t lag : s.lags) {
        if (lag < c.horizon + kMotifSteps) {
          e->Add(absl::StrCat("data.synthetic.lags: lag ", lag, " must be ≥ labels.horizon + 4 = ",
                              c.horizon + kMotifSteps, " (the cue must precede the label's past)"));
        } else if (!s.cross_day && lag + c.horizon >= s.steps_per_day) {
          e->Add(absl::StrCat("data.synthetic.lags: lag ", lag, " + horizon ", c.horizon,
                              " does not fit in a day of ", s.steps_per_day,
                              " steps; set cross_day true"));
        }
      }
    }
  } else if (2 * c.horizon + 1 >= c.data.csv_data.session.steps) {
    e->Add(absl::StrCat("labels.horizon ", c.horizon, " leaves no labelled step in a session of ",
                        c.data.csv_data.session.steps, " steps"));
  } else {
    const absl::Status s = c.data.csv_data.session.Validate();
    if (!s.ok()) e->Add(absl::StrCat("data.csv.session: ", s.message()));
  }
}

}  // namespace

const char* ValidateOnName(ValidateOn v) { return v == ValidateOn::kCalls ? "calls" : "all"; }

const char* BestByName(BestBy by) {
  switch (by) {
    case BestBy::kAccuracy:
      return "accuracy";
    case BestBy::kMacroF1:
      return "macro_f1";
    case BestBy::kLogLoss:
      return "log_loss";
    case BestBy::kSharpe:
      break;
  }
  return "sharpe";
}

ModelConfig SweepConfig::ModelFor() const {
  ModelConfig m;
  m.name = "sweep-" + name;
  m.features = kNumFeatures;
  m.width = model.width;
  m.layers = model.layers;
  m.heads = model.heads;
  m.kv_heads = model.kv_heads;
  m.mlp_ratio = model.mlp_ratio;
  m.classes = 3;
  m.max_context = static_cast<int>(
      std::max<int64_t>(1, contexts.empty() ? 1 : *std::max_element(contexts.begin(), contexts.end())));
  m.rope_theta = static_cast<float>(model.rope_theta);
  m.rotary_dims = model.rotary_dims;
  m.nope_interval = model.nope_interval;
  m.fourier_feature = model.fourier_feature;
  m.fourier_periods.assign(model.fourier_periods.begin(), model.fourier_periods.end());
  return m;
}

TrainerOptions SweepConfig::TrainerFor(uint64_t seed, int64_t total_steps) const {
  TrainerOptions t;
  t.optimizer = optimizer.kind;
  t.hyper = optimizer.hyper;
  t.lr.peak = optimizer.learning_rate;
  t.lr.warmup_steps = std::min(optimizer.warmup_steps, total_steps);
  t.lr.total_steps = total_steps;
  t.lr.min_ratio = optimizer.min_lr_ratio;
  t.micro_batch = optimizer.micro_batch;
  t.max_grad_norm = optimizer.grad_clip_norm;
  t.hessian_interval = optimizer.hessian_interval;
  t.seed = seed;
  return t;
}

int64_t SweepConfig::BatchFor(int64_t n) const {
  return std::max<int64_t>(1, optimizer.tokens_per_step / n);
}

int64_t SweepConfig::EvalStrideFor(int64_t n) const {
  return training.eval_stride > 0 ? training.eval_stride : std::max<int64_t>(1, n / 8);
}

SplitConfig SweepConfig::SplitFor(int64_t n) const {
  SplitConfig s = walk_forward;
  s.context = n;
  s.horizon = horizon;
  return s;
}

absl::StatusOr<SweepConfig> ParseSweepConfig(const std::string& json_text) {
  if (absl::Status depth = CheckJsonNesting(json_text); !depth.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("sweep config: ", depth.message()));
  }
  const json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return absl::InvalidArgumentError("sweep config: not valid JSON");
  }
  JsonErrors errors;
  SweepConfig c;
  JsonFields f(root, "", &errors);
  f.String("name", &c.name, {}, 100);
  if (c.name.empty()) f.Error("name", "must not be empty");
  f.IntList("contexts", 1, kMaxContext, 1, 16, &c.contexts);
  f.UintList("seeds", 1, 16, &c.seeds);
  {
    JsonFields m = f.Object("model");
    m.Int("width", 1, 8192, &c.model.width);
    m.Int("layers", 1, 256, &c.model.layers);
    m.Int("heads", 1, 1024, &c.model.heads);
    m.Int("kv_heads", 1, 1024, &c.model.kv_heads);
    m.Int("mlp_ratio", 1, 64, &c.model.mlp_ratio);
    m.Double("rope_theta", 0, 1e12, &c.model.rope_theta, true);
    m.Int("rotary_dims", -1, 8192, &c.model.rotary_dims);
    m.Int("nope_interval", 0, 256, &c.model.nope_interval);
    if (c.model.nope_interval > c.model.layers)
      m.Error("nope_interval", "must be at most layers (every k-th layer unrotated)");
    m.Int("fourier_feature", -1, kNumFeatures - 1, &c.model.fourier_feature);
    m.PositiveList("fourier_periods", 1e9, 1, kMaxFourierPeriods, &c.model.fourier_periods);
    if (c.model.fourier_feature >= 0 && c.model.fourier_periods.empty())
      m.Error("fourier_periods", "must be given with fourier_feature");
    if (c.model.fourier_feature < 0 && !c.model.fourier_periods.empty())
      m.Error("fourier_feature", "must name a feature column when fourier_periods is given");
    m.Finish();
  }
  ReadOptimizer(f.Object("optimizer"), &c.optimizer);
  ReadTraining(f.Object("training"), &c.training);
  {
    JsonFields d = f.Object("data");
    const bool has_csv = d.Has("csv"), has_synthetic = d.Has("synthetic");
    if (has_csv && has_synthetic) d.Error("csv", "and data.synthetic are exclusive: give one");
    c.data.csv = has_csv;
    ReadSynthetic(d.Object("synthetic"), &c.data.synthetic);
    if (has_csv) ReadCsv(d.Object("csv"), &c.data.csv_data);
    d.Finish();
  }
  {
    JsonFields l = f.Object("labels");
    l.Int("horizon", int64_t{1}, int64_t{1} << 20, &c.horizon);
    l.Double("alpha_bps", 0, 1e4, &c.label_alpha_bps);
    l.Finish();
  }
  {
    JsonFields w = f.Object("walk_forward");
    std::string mode = SplitModeName(c.walk_forward.mode);
    w.String("mode", &mode, {"expanding", "rolling"});
    c.walk_forward.mode = mode == "rolling" ? SplitMode::kRolling : SplitMode::kExpanding;
    w.Int("train_days", 1, 1000000, &c.walk_forward.train_days);
    w.Int("test_days", 1, 1000000, &c.walk_forward.test_days);
    w.Int("embargo_days", 0, 1000000, &c.walk_forward.embargo_days);
    w.Bool("warm_start", &c.warm_start);
    w.Finish();
  }
  f.Double("cost_bps", 0, 1e4, &c.cost_bps);
  {
    JsonFields g = f.Object("gates");
    g.Double("min_dsr", 0, 1, &c.gates.min_dsr);
    g.Double("max_pbo", 0, 1, &c.gates.max_pbo);
    g.Int("pbo_blocks", 2, 32, &c.gates.pbo_blocks);
    if (c.gates.pbo_blocks % 2 != 0) g.Error("pbo_blocks", "must be even (CSCV halves)");
    std::string by = BestByName(c.gates.best_by);
    g.String("best_by", &by, {"sharpe", "accuracy", "macro_f1", "log_loss"});
    c.gates.best_by = ParseBestBy(by);
    g.Finish();
  }
  {
    JsonFields p = f.Object("precision_check");
    p.Bool("enabled", &c.precision_check.enabled);
    p.Int("max_windows", 1, 100000, &c.precision_check.max_windows);
    p.Finish();
  }
  f.String("device", &c.device, {"auto", "cpu", "cuda"});
  f.Int("max_parallel_arms", 1, 64, &c.max_parallel_arms);
  f.Int("replicas_per_arm", 1, 64, &c.replicas_per_arm);
  f.Int("arms_per_gpu", 1, 64, &c.arms_per_gpu);
  f.Int("cpu_threads", 0, 1024, &c.cpu_threads);
  f.Finish();
  CrossCheck(c, &errors);  // bad fields kept their defaults, so the rules still apply
  if (!errors.empty()) return errors.ToStatus("sweep config");
  std::sort(c.contexts.begin(), c.contexts.end());  // arms run and report shortest first
  return c;
}

std::string SweepConfigToJson(const SweepConfig& c, int indent) {
  const SyntheticDataConfig& s = c.data.synthetic;
  json data;
  if (c.data.csv) {
    const CsvDataConfig& v = c.data.csv_data;
    data["csv"] = {{"paths", v.paths},
                   {"format", v.format},
                   {"instrument", v.instrument},
                   {"session",
                    {{"open_second", v.session.open_second},
                     {"step_seconds", static_cast<double>(v.session.step_us) / kMicrosPerSecond},
                     {"steps", v.session.steps},
                     {"clock_shift_seconds", v.session.clock_shift_seconds},
                     {"weekdays_only", v.session.weekdays_only},
                     {"min_rows_in_session", v.session.min_rows_in_session}}},
                   {"first_day", v.first_day},
                   {"max_days", v.max_days}};
  } else {
    json& j = data["synthetic"];
    j["generator"] = s.generator;
    j["seed"] = s.seed;
    j["days"] = s.days;
    j["steps_per_day"] = s.steps_per_day;
    j["spread_bps"] = s.spread_bps;
    j["lags"] = s.lags;
    j["events_per_lag_per_day"] = s.events_per_lag_per_day;
    j["events_per_day"] = s.events_per_day;
    j["sigma_bps"] = s.sigma_bps;
    j["drift_bps"] = s.drift_bps;
    j["motif_amplitude"] = s.motif_amplitude;
    j["flow_noise"] = s.flow_noise;
    j["cross_day"] = s.cross_day;
    j["tag_ratio"] = s.tag_ratio;
    j["keys"] = s.keys;
    j["key_window"] = s.key_window;
    j["key_spread_step"] = s.key_spread_step;
    j["key_lead"] = s.key_lead;
    j["cue_key_shift"] = s.cue_key_shift;
    j["cue_sign_return_bps"] = s.cue_sign_return_bps;
    j["flip_prob"] = s.flip_prob;
    j["mu_over_sigma"] = s.mu_over_sigma;
    j["hurst"] = s.hurst;
    j["hawkes_mu"] = s.hawkes_mu;
    j["hawkes_alpha"] = s.hawkes_alpha;
    j["hawkes_beta"] = s.hawkes_beta;
    j["impact_bps"] = s.impact_bps;
  }
  const SweepOptimizerConfig& o = c.optimizer;
  json j = {
      {"name", c.name},
      {"contexts", c.contexts},
      {"seeds", c.seeds},
      {"model",
       {{"width", c.model.width},
        {"layers", c.model.layers},
        {"heads", c.model.heads},
        {"kv_heads", c.model.kv_heads},
        {"mlp_ratio", c.model.mlp_ratio},
        {"rope_theta", c.model.rope_theta},
        {"rotary_dims", c.model.rotary_dims}}},
      {"optimizer",
       {{"name", OptimizerKindName(o.kind)},
        {"learning_rate", o.learning_rate},
        {"beta1", o.hyper.beta1},
        {"beta2", o.hyper.beta2},
        {"epsilon", o.hyper.eps},
        {"weight_decay", o.hyper.weight_decay},
        {"rho", o.hyper.rho},
        {"warmup_steps", o.warmup_steps},
        {"min_lr_ratio", o.min_lr_ratio},
        {"grad_clip_norm", o.grad_clip_norm},
        {"hessian_interval", o.hessian_interval},
        {"tokens_per_step", o.tokens_per_step},
        {"micro_batch", o.micro_batch}}},
      {"training",
       {{"first_fold_epochs", c.training.first_fold_epochs},
        {"epochs_per_fold", c.training.epochs_per_fold},
        {"min_steps_per_fold", c.training.min_steps_per_fold},
        {"max_steps_per_fold", c.training.max_steps_per_fold},
        {"checkpoint_every_steps", c.training.checkpoint_every_steps},
        {"eval_stride", c.training.eval_stride},
        {"validation_days", c.training.validation_days},
        {"validate_every_steps", c.training.validate_every_steps},
        {"validation_batches", c.training.validation_batches},
        {"patience", c.training.patience},
        {"early_stop_min_steps", c.training.early_stop_min_steps},
        {"validate_on", ValidateOnName(c.training.validate_on)},
        {"context_warmup_steps", c.training.context_warmup_steps},
        {"context_warmup_start", c.training.context_warmup_start},
        {"max_train_seconds", c.training.max_train_seconds}}},
      {"data", data},
      {"labels", {{"horizon", c.horizon}, {"alpha_bps", c.label_alpha_bps}}},
      {"walk_forward",
       {{"mode", SplitModeName(c.walk_forward.mode)},
        {"train_days", c.walk_forward.train_days},
        {"test_days", c.walk_forward.test_days},
        {"embargo_days", c.walk_forward.embargo_days},
        {"warm_start", c.warm_start}}},
      {"cost_bps", c.cost_bps},
      {"gates",
       {{"min_dsr", c.gates.min_dsr},
        {"max_pbo", c.gates.max_pbo},
        {"pbo_blocks", c.gates.pbo_blocks},
        {"best_by", BestByName(c.gates.best_by)}}},
      {"precision_check",
       {{"enabled", c.precision_check.enabled},
        {"max_windows", c.precision_check.max_windows}}},
      {"device", c.device},
      {"max_parallel_arms", c.max_parallel_arms},
      {"replicas_per_arm", c.replicas_per_arm},
      {"arms_per_gpu", c.arms_per_gpu},
      {"cpu_threads", c.cpu_threads}};
  if (c.model.nope_interval > 0) j["model"]["nope_interval"] = c.model.nope_interval;
  if (c.model.fourier_feature >= 0) {
    j["model"]["fourier_feature"] = c.model.fourier_feature;
    j["model"]["fourier_periods"] = c.model.fourier_periods;
  }
  return j.dump(indent);
}

}  // namespace flashtick
