// The engine's SweepConfig from and to its schema, flashtick.v1.SweepConfig
// (proto/flashtick/v1/sweep_config.proto; see sweep_config.h). Reading checks the
// ranges and choices the schema cannot state (ConfigFields), then the rules that tie
// fields together (SweepRuleViolations, sweep_config.cc). Writing sets every field, so a
// stored configuration says exactly what ran.
#include <algorithm>
#include <string>
#include <vector>

#include "flashtick/v1/sweep_config.pb.h"
#include "research/sweep/config_fields.h"
#include "research/sweep/sweep_config.h"
#include "ticks/timestamp.h"

// A message field's name, presence and value (FIELD), or a repeated field's name and
// elements (LIST), as ConfigFields' readers take them; this file's shorthand only.
#define FIELD(msg, name) #name, (msg).has_##name(), (msg).name()
#define LIST(msg, name) #name, absl::MakeConstSpan((msg).name().data(), (msg).name().size())

namespace flashtick {
namespace {

constexpr int64_t kMaxContext = int64_t{1} << 20;
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

void ReadModel(const v1::SweepModel& m, ConfigFields f, SweepModelConfig* c) {
  f.Int(FIELD(m, width), 1, 8192, &c->width);
  f.Int(FIELD(m, layers), 1, 256, &c->layers);
  f.Int(FIELD(m, heads), 1, 1024, &c->heads);
  f.Int(FIELD(m, kv_heads), 1, 1024, &c->kv_heads);
  f.Int(FIELD(m, mlp_ratio), 1, 64, &c->mlp_ratio);
  f.Double(FIELD(m, rope_theta), 0, 1e12, &c->rope_theta, /*lo_open=*/true);
  f.Int(FIELD(m, rotary_dims), -1, 8192, &c->rotary_dims);
  f.Int(FIELD(m, nope_interval), 0, 256, &c->nope_interval);
  if (c->nope_interval > c->layers)
    f.Error("nope_interval", "must be at most layers (every k-th layer unrotated)");
  f.Int(FIELD(m, exclude_self_layers), 0, 256, &c->exclude_self_layers);
  if (c->exclude_self_layers > c->layers)
    f.Error("exclude_self_layers", "must be at most layers (the first k layers exclude the step itself)");
  f.Int(FIELD(m, fourier_feature), -1, kNumFeatures - 1, &c->fourier_feature);
  f.PositiveList(LIST(m, fourier_periods), 1e9, kMaxFourierPeriods, &c->fourier_periods);
  if (c->fourier_feature >= 0 && c->fourier_periods.empty())
    f.Error("fourier_periods", "must be given with fourier_feature");
  if (c->fourier_feature < 0 && !c->fourier_periods.empty())
    f.Error("fourier_feature", "must name a feature column when fourier_periods is given");
}

void ReadOptimizer(const v1::SweepOptimizer& m, ConfigFields f, SweepOptimizerConfig* o) {
  std::string name = OptimizerKindName(o->kind);
  f.String(FIELD(m, name), &name, {"adamw", "sophia_h"});
  const OptimizerKind kind =
      name == "sophia_h" ? OptimizerKind::kSophiaH : OptimizerKind::kAdamW;
  if (kind != o->kind) {  // another optimizer: start from its published defaults
    o->kind = kind;
    o->hyper = OptimizerHyper::Defaults(kind);
  }
  f.Double(FIELD(m, learning_rate), 0, 10, &o->learning_rate, true);
  f.Double(FIELD(m, beta1), 0, 1, &o->hyper.beta1);
  f.Double(FIELD(m, beta2), 0, 1, &o->hyper.beta2);
  f.Double(FIELD(m, epsilon), 0, 1, &o->hyper.eps, true);
  f.Double(FIELD(m, weight_decay), 0, 10, &o->hyper.weight_decay);
  f.Double(FIELD(m, rho), 0, 100, &o->hyper.rho, true);
  f.Int(FIELD(m, warmup_steps), int64_t{0}, int64_t{1} << 30, &o->warmup_steps);
  f.Double(FIELD(m, min_lr_ratio), 0, 1, &o->min_lr_ratio);
  f.Double(FIELD(m, grad_clip_norm), 0, 1e9, &o->grad_clip_norm);
  f.Int(FIELD(m, hessian_interval), int64_t{1}, int64_t{1} << 20, &o->hessian_interval);
  f.Int(FIELD(m, tokens_per_step), int64_t{1}, int64_t{1} << 28, &o->tokens_per_step);
  f.Int(FIELD(m, micro_batch), int64_t{0}, int64_t{1} << 20, &o->micro_batch);
  if (o->hyper.beta1 >= 1 || o->hyper.beta2 >= 1) f.Error("beta1", "and beta2 must be below 1");
}

void ReadTraining(const v1::SweepTraining& m, ConfigFields f, SweepTrainingConfig* t) {
  f.Double(FIELD(m, first_fold_epochs), 0, 1e4, &t->first_fold_epochs, true);
  f.Double(FIELD(m, epochs_per_fold), 0, 1e4, &t->epochs_per_fold);
  f.Int(FIELD(m, min_steps_per_fold), int64_t{0}, int64_t{1} << 30, &t->min_steps_per_fold);
  f.Int(FIELD(m, max_steps_per_fold), int64_t{0}, int64_t{1} << 30, &t->max_steps_per_fold);
  f.Int(FIELD(m, checkpoint_every_steps), int64_t{1}, int64_t{1} << 30,
        &t->checkpoint_every_steps);
  f.Int(FIELD(m, eval_stride), int64_t{0}, kMaxContext, &t->eval_stride);
  f.Int(FIELD(m, validation_days), 0, 100000, &t->validation_days);
  f.Int(FIELD(m, validate_every_steps), int64_t{1}, int64_t{1} << 30, &t->validate_every_steps);
  f.Int(FIELD(m, validation_batches), 1, 1024, &t->validation_batches);
  f.Int(FIELD(m, patience), 1, 1 << 20, &t->patience);
  f.Int(FIELD(m, early_stop_min_steps), int64_t{0}, int64_t{1} << 30, &t->early_stop_min_steps);
  std::string on = ValidateOnName(t->validate_on);
  f.String(FIELD(m, validate_on), &on, {"all", "calls"});
  t->validate_on = on == "calls" ? ValidateOn::kCalls : ValidateOn::kAll;
  f.Int(FIELD(m, context_warmup_steps), int64_t{0}, int64_t{1} << 30, &t->context_warmup_steps);
  f.Int(FIELD(m, context_warmup_start), int64_t{1}, kMaxContext, &t->context_warmup_start);
  f.Double(FIELD(m, max_train_seconds), 0, 1e7, &t->max_train_seconds);
  f.Bool(FIELD(m, deterministic), &t->deterministic);
  f.Int(FIELD(m, restarts), 1, 16, &t->restarts);
  f.Int(FIELD(m, restart_steps), int64_t{0}, int64_t{1} << 30, &t->restart_steps);
  if (t->restarts > 1 && t->restart_steps < 1)
    f.Error("restart_steps", "must be at least 1 when restarts > 1");
  f.Int(FIELD(m, stall_restarts), 0, 16, &t->stall_restarts);
  f.Double(FIELD(m, stall_restart_repeat_tolerance), 0, 1, &t->stall_restart_repeat_tolerance);
  if (t->max_steps_per_fold > 0 && t->max_steps_per_fold < t->min_steps_per_fold)
    f.Error("max_steps_per_fold", "must be 0 (no cap) or ≥ min_steps_per_fold");
}

void ReadSynthetic(const v1::SyntheticData& m, ConfigFields f, SyntheticDataConfig* s) {
  f.String(FIELD(m, generator), &s->generator, kGenerators);
  f.Uint(FIELD(m, seed), &s->seed);
  f.Int(FIELD(m, days), 2, 100000, &s->days);
  f.Int(FIELD(m, steps_per_day), int64_t{16}, int64_t{1} << 24, &s->steps_per_day);
  f.Double(FIELD(m, spread_bps), 0, 1e4, &s->spread_bps, /*lo_open=*/true);
  f.IntList(LIST(m, lags), 1, kMaxContext * 4, 16, &s->lags);
  f.Int(FIELD(m, events_per_lag_per_day), 0, 100000, &s->events_per_lag_per_day);
  f.IntList(LIST(m, events_per_day), 0, 100000, 16, &s->events_per_day);
  f.Double(FIELD(m, sigma_bps), 0, 1e4, &s->sigma_bps);
  f.Double(FIELD(m, drift_bps), 0, 1e4, &s->drift_bps);
  f.Double(FIELD(m, motif_amplitude), 0, 1e9, &s->motif_amplitude, true);
  f.Double(FIELD(m, flow_noise), 0, 1e9, &s->flow_noise);
  f.Bool(FIELD(m, cross_day), &s->cross_day);
  f.Double(FIELD(m, tag_ratio), 0, 1e6, &s->tag_ratio, true);
  f.Int(FIELD(m, keys), 1, 1024, &s->keys);
  f.Int(FIELD(m, key_window), int64_t{0}, kMaxContext * 4, &s->key_window);
  f.Double(FIELD(m, key_spread_step), 0, 1e4, &s->key_spread_step, true);
  f.Int(FIELD(m, key_lead), int64_t{0}, int64_t{1000}, &s->key_lead);
  f.Double(FIELD(m, cue_key_shift), 0, 1e4, &s->cue_key_shift);
  f.Double(FIELD(m, cue_sign_return_bps), 0, 1e4, &s->cue_sign_return_bps);
  f.Double(FIELD(m, flip_prob), 0, 1, &s->flip_prob, true);
  f.Double(FIELD(m, mu_over_sigma), 0, 100, &s->mu_over_sigma);
  f.Double(FIELD(m, hurst), 0, 1, &s->hurst, true);
  if (s->hurst >= 1) f.Error("hurst", "must be below 1");
  f.Double(FIELD(m, hawkes_mu), 0, 1e6, &s->hawkes_mu, true);
  f.Double(FIELD(m, hawkes_alpha), 0, 1e6, &s->hawkes_alpha);
  f.Double(FIELD(m, hawkes_beta), 0, 1e6, &s->hawkes_beta, true);
  f.Double(FIELD(m, impact_bps), 0, 1e4, &s->impact_bps);
}

void ReadCsv(const v1::CsvData& m, ConfigFields f, CsvDataConfig* c) {
  f.StringList("paths", std::vector<std::string>(m.paths().begin(), m.paths().end()), 10000,
               &c->paths);
  if (m.paths().empty()) f.Error("paths", "is required: the CSV files on the server's data volume");
  f.String(FIELD(m, format), &c->format, {"quotes", "bars"});
  f.String(FIELD(m, instrument), &c->instrument, {}, 64);
  const v1::CsvSession& s = m.session();
  ConfigFields g = f.Nested("session");
  g.Int(FIELD(s, open_second), int64_t{0}, int64_t{86399}, &c->session.open_second);
  double step_seconds = static_cast<double>(c->session.step_us) / kMicrosPerSecond;
  g.Double(FIELD(s, step_seconds), 1e-6, 86400, &step_seconds, true);
  c->session.step_us = static_cast<int64_t>(step_seconds * kMicrosPerSecond + 0.5);
  g.Int(FIELD(s, steps), int64_t{1}, int64_t{1} << 24, &c->session.steps);
  g.Int(FIELD(s, clock_shift_seconds), int64_t{-86400}, int64_t{86400},
        &c->session.clock_shift_seconds);
  g.Bool(FIELD(s, weekdays_only), &c->session.weekdays_only);
  g.Int(FIELD(s, min_rows_in_session), int64_t{1}, int64_t{1} << 30,
        &c->session.min_rows_in_session);
  f.Int(FIELD(m, first_day), 0, 10000000, &c->first_day);
  f.Int(FIELD(m, max_days), 0, 10000000, &c->max_days);
}

void ReadRest(const v1::SweepConfig& m, ConfigFields f, SweepConfig* c) {
  const v1::SweepLabels& l = m.labels();
  ConfigFields labels = f.Nested("labels");
  labels.Int(FIELD(l, horizon), int64_t{1}, int64_t{1} << 20, &c->horizon);
  labels.Double(FIELD(l, alpha_bps), 0, 1e4, &c->label_alpha_bps);

  const v1::SweepWalkForward& w = m.walk_forward();
  ConfigFields wf = f.Nested("walk_forward");
  std::string mode = SplitModeName(c->walk_forward.mode);
  wf.String(FIELD(w, mode), &mode, {"expanding", "rolling"});
  c->walk_forward.mode = mode == "rolling" ? SplitMode::kRolling : SplitMode::kExpanding;
  wf.Int(FIELD(w, train_days), 1, 1000000, &c->walk_forward.train_days);
  wf.Int(FIELD(w, test_days), 1, 1000000, &c->walk_forward.test_days);
  wf.Int(FIELD(w, embargo_days), 0, 1000000, &c->walk_forward.embargo_days);
  wf.Bool(FIELD(w, warm_start), &c->warm_start);

  f.Double(FIELD(m, cost_bps), 0, 1e4, &c->cost_bps);
  const v1::SweepGates& g = m.gates();
  ConfigFields gates = f.Nested("gates");
  gates.Double(FIELD(g, min_dsr), 0, 1, &c->gates.min_dsr);
  gates.Double(FIELD(g, max_pbo), 0, 1, &c->gates.max_pbo);
  gates.Int(FIELD(g, pbo_blocks), 2, 32, &c->gates.pbo_blocks);
  if (c->gates.pbo_blocks % 2 != 0) gates.Error("pbo_blocks", "must be even (CSCV halves)");
  std::string by = BestByName(c->gates.best_by);
  gates.String(FIELD(g, best_by), &by, {"sharpe", "accuracy", "macro_f1", "log_loss"});
  c->gates.best_by = ParseBestBy(by);

  const v1::SweepPrecisionCheck& p = m.precision_check();
  ConfigFields precision = f.Nested("precision_check");
  precision.Bool(FIELD(p, enabled), &c->precision_check.enabled);
  precision.Int(FIELD(p, max_windows), 1, 100000, &c->precision_check.max_windows);

  f.String(FIELD(m, device), &c->device, {"auto", "cpu", "cuda"});
  f.Int(FIELD(m, max_parallel_arms), 1, 64, &c->max_parallel_arms);
  f.Int(FIELD(m, replicas_per_arm), 1, 64, &c->replicas_per_arm);
  f.Int(FIELD(m, arms_per_gpu), 1, 64, &c->arms_per_gpu);
  f.Int(FIELD(m, cpu_threads), 0, 1024, &c->cpu_threads);
}

template <typename Repeated, typename Values>
void SetList(Repeated* out, const Values& values) {
  out->Clear();
  for (const auto& v : values) out->Add(v);
}

}  // namespace

absl::StatusOr<SweepConfig> SweepConfigFromProto(const v1::SweepConfig& m) {
  ConfigErrors errors;
  SweepConfig c;
  ConfigFields f("", &errors);
  f.String(FIELD(m, name), &c.name, {}, 100);
  if (c.name.empty()) f.Error("name", "must not be empty");
  f.IntList(LIST(m, contexts), 1, kMaxContext, 16, &c.contexts);
  f.UintList(LIST(m, seeds), 16, &c.seeds);
  ReadModel(m.model(), f.Nested("model"), &c.model);
  ReadOptimizer(m.optimizer(), f.Nested("optimizer"), &c.optimizer);
  ReadTraining(m.training(), f.Nested("training"), &c.training);
  c.data.csv = m.data().has_csv();
  ReadSynthetic(m.data().synthetic(), f.Nested("data").Nested("synthetic"), &c.data.synthetic);
  if (c.data.csv) ReadCsv(m.data().csv(), f.Nested("data").Nested("csv"), &c.data.csv_data);
  ReadRest(m, f, &c);
  // Bad fields kept their defaults, so the rules still apply.
  for (std::string& broken : SweepRuleViolations(c)) errors.Add(std::move(broken));
  if (!errors.empty()) return errors.ToStatus("sweep config");
  std::sort(c.contexts.begin(), c.contexts.end());  // arms run and report shortest first
  return c;
}

v1::SweepConfig SweepConfigToProto(const SweepConfig& c) {
  v1::SweepConfig m;
  m.set_name(c.name);
  SetList(m.mutable_contexts(), c.contexts);
  SetList(m.mutable_seeds(), c.seeds);
  v1::SweepModel* model = m.mutable_model();
  model->set_width(c.model.width);
  model->set_layers(c.model.layers);
  model->set_heads(c.model.heads);
  model->set_kv_heads(c.model.kv_heads);
  model->set_mlp_ratio(c.model.mlp_ratio);
  model->set_rope_theta(c.model.rope_theta);
  model->set_rotary_dims(c.model.rotary_dims);
  model->set_nope_interval(c.model.nope_interval);
  // Unset when 0, so configs from before the field print as before.
  if (c.model.exclude_self_layers > 0) model->set_exclude_self_layers(c.model.exclude_self_layers);
  model->set_fourier_feature(c.model.fourier_feature);
  SetList(model->mutable_fourier_periods(), c.model.fourier_periods);

  const SweepOptimizerConfig& o = c.optimizer;
  v1::SweepOptimizer* opt = m.mutable_optimizer();
  opt->set_name(OptimizerKindName(o.kind));
  opt->set_learning_rate(o.learning_rate);
  opt->set_beta1(o.hyper.beta1);
  opt->set_beta2(o.hyper.beta2);
  opt->set_epsilon(o.hyper.eps);
  opt->set_weight_decay(o.hyper.weight_decay);
  opt->set_rho(o.hyper.rho);
  opt->set_warmup_steps(static_cast<int32_t>(o.warmup_steps));
  opt->set_min_lr_ratio(o.min_lr_ratio);
  opt->set_grad_clip_norm(o.grad_clip_norm);
  opt->set_hessian_interval(static_cast<int32_t>(o.hessian_interval));
  opt->set_tokens_per_step(static_cast<int32_t>(o.tokens_per_step));
  opt->set_micro_batch(static_cast<int32_t>(o.micro_batch));

  const SweepTrainingConfig& t = c.training;
  v1::SweepTraining* tr = m.mutable_training();
  tr->set_first_fold_epochs(t.first_fold_epochs);
  tr->set_epochs_per_fold(t.epochs_per_fold);
  tr->set_min_steps_per_fold(static_cast<int32_t>(t.min_steps_per_fold));
  tr->set_max_steps_per_fold(static_cast<int32_t>(t.max_steps_per_fold));
  tr->set_checkpoint_every_steps(static_cast<int32_t>(t.checkpoint_every_steps));
  tr->set_eval_stride(static_cast<int32_t>(t.eval_stride));
  tr->set_validation_days(t.validation_days);
  tr->set_validate_every_steps(static_cast<int32_t>(t.validate_every_steps));
  tr->set_validation_batches(t.validation_batches);
  tr->set_patience(t.patience);
  tr->set_early_stop_min_steps(static_cast<int32_t>(t.early_stop_min_steps));
  tr->set_validate_on(ValidateOnName(t.validate_on));
  tr->set_context_warmup_steps(static_cast<int32_t>(t.context_warmup_steps));
  tr->set_context_warmup_start(static_cast<int32_t>(t.context_warmup_start));
  tr->set_max_train_seconds(t.max_train_seconds);
  if (t.deterministic) tr->set_deterministic(true);  // unset otherwise: older configs print as before
  if (t.restarts > 1) {  // likewise
    tr->set_restarts(t.restarts);
    tr->set_restart_steps(static_cast<int32_t>(t.restart_steps));
  }
  if (t.stall_restarts > 0) tr->set_stall_restarts(t.stall_restarts);  // likewise
  if (t.stall_restart_repeat_tolerance > 0)  // likewise
    tr->set_stall_restart_repeat_tolerance(t.stall_restart_repeat_tolerance);

  if (c.data.csv) {
    const CsvDataConfig& v = c.data.csv_data;
    v1::CsvData* csv = m.mutable_data()->mutable_csv();
    for (const std::string& path : v.paths) csv->add_paths(path);
    csv->set_format(v.format);
    csv->set_instrument(v.instrument);
    v1::CsvSession* s = csv->mutable_session();
    s->set_open_second(static_cast<int32_t>(v.session.open_second));
    s->set_step_seconds(static_cast<double>(v.session.step_us) / kMicrosPerSecond);
    s->set_steps(static_cast<int32_t>(v.session.steps));
    s->set_clock_shift_seconds(static_cast<int32_t>(v.session.clock_shift_seconds));
    s->set_weekdays_only(v.session.weekdays_only);
    s->set_min_rows_in_session(static_cast<int32_t>(v.session.min_rows_in_session));
    csv->set_first_day(v.first_day);
    csv->set_max_days(v.max_days);
  } else {
    const SyntheticDataConfig& s = c.data.synthetic;
    v1::SyntheticData* syn = m.mutable_data()->mutable_synthetic();
    syn->set_generator(s.generator);
    syn->set_seed(static_cast<uint32_t>(s.seed));
    syn->set_days(s.days);
    syn->set_steps_per_day(static_cast<int32_t>(s.steps_per_day));
    syn->set_spread_bps(s.spread_bps);
    SetList(syn->mutable_lags(), s.lags);
    syn->set_events_per_lag_per_day(s.events_per_lag_per_day);
    SetList(syn->mutable_events_per_day(), s.events_per_day);
    syn->set_sigma_bps(s.sigma_bps);
    syn->set_drift_bps(s.drift_bps);
    syn->set_motif_amplitude(s.motif_amplitude);
    syn->set_flow_noise(s.flow_noise);
    syn->set_cross_day(s.cross_day);
    syn->set_tag_ratio(s.tag_ratio);
    syn->set_keys(s.keys);
    syn->set_key_window(static_cast<int32_t>(s.key_window));
    syn->set_key_spread_step(s.key_spread_step);
    syn->set_key_lead(static_cast<int32_t>(s.key_lead));
    syn->set_cue_key_shift(s.cue_key_shift);
    syn->set_cue_sign_return_bps(s.cue_sign_return_bps);
    syn->set_flip_prob(s.flip_prob);
    syn->set_mu_over_sigma(s.mu_over_sigma);
    syn->set_hurst(s.hurst);
    syn->set_hawkes_mu(s.hawkes_mu);
    syn->set_hawkes_alpha(s.hawkes_alpha);
    syn->set_hawkes_beta(s.hawkes_beta);
    syn->set_impact_bps(s.impact_bps);
  }
  m.mutable_labels()->set_horizon(static_cast<int32_t>(c.horizon));
  m.mutable_labels()->set_alpha_bps(c.label_alpha_bps);
  v1::SweepWalkForward* wf = m.mutable_walk_forward();
  wf->set_mode(SplitModeName(c.walk_forward.mode));
  wf->set_train_days(c.walk_forward.train_days);
  wf->set_test_days(c.walk_forward.test_days);
  wf->set_embargo_days(c.walk_forward.embargo_days);
  wf->set_warm_start(c.warm_start);
  m.set_cost_bps(c.cost_bps);
  v1::SweepGates* gates = m.mutable_gates();
  gates->set_min_dsr(c.gates.min_dsr);
  gates->set_max_pbo(c.gates.max_pbo);
  gates->set_pbo_blocks(c.gates.pbo_blocks);
  gates->set_best_by(BestByName(c.gates.best_by));
  m.mutable_precision_check()->set_enabled(c.precision_check.enabled);
  m.mutable_precision_check()->set_max_windows(c.precision_check.max_windows);
  m.set_device(c.device);
  m.set_max_parallel_arms(c.max_parallel_arms);
  m.set_replicas_per_arm(c.replicas_per_arm);
  m.set_arms_per_gpu(c.arms_per_gpu);
  m.set_cpu_threads(c.cpu_threads);
  return m;
}

}  // namespace flashtick

#undef FIELD
#undef LIST
