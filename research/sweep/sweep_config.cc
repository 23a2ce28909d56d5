// SweepConfig: the rules between fields, the derived settings, and JSON through the
// schema's protobuf JSON mapping (see sweep_config.h). Reading and writing the schema
// field by field is in sweep_config_proto.cc.
#include "research/sweep/sweep_config.h"

#include <algorithm>
#include <set>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "flashtick/v1/sweep_config.pb.h"
#include "research/sweep/json_limits.h"

namespace flashtick {
namespace {

constexpr int64_t kMaxTotalSteps = int64_t{1} << 31;  // ticks held in memory (×6 floats)
constexpr int kMotifSteps = 4;                        // planted_cue.h: [A,0,A,0]
constexpr size_t kMaxParserMessage = 160;             // characters of protobuf's message kept

// One rule's message, collected.
struct Rules {
  std::vector<std::string> broken;
  void Add(std::string message) { broken.push_back(std::move(message)); }
};

}  // namespace

std::vector<std::string> SweepRuleViolations(const SweepConfig& c) {
  Rules rules;
  Rules* e = &rules;
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
  if (c.training.restarts > 1 && c.training.validation_days == 0) {
    e->Add("training.restarts > 1 chooses a start on the validation days: it needs "
           "training.validation_days > 0");
  }
  if (c.training.restarts > 1 && c.replicas_per_arm > 1) {
    e->Add("training.restarts > 1 runs one trainer per arm; it cannot be combined with "
           "replicas_per_arm > 1");
  }
  if (c.training.stall_restarts > 0 && c.training.validation_days == 0) {
    e->Add("training.stall_restarts > 0 restarts a start whose validation loss stalls: it needs "
           "training.validation_days > 0");
  }
  if (c.training.stall_restart_repeat_tolerance > 0 && c.training.stall_restarts == 0) {
    e->Add("training.stall_restart_repeat_tolerance ends stall restarts early: it needs "
           "training.stall_restarts > 0");
  }
  if (c.training.stall_restarts > 0 && c.training.restarts > 1) {
    e->Add("training.stall_restarts > 0 cannot be combined with training.restarts > 1 (one "
           "way of choosing the first fold's start at a time)");
  }
  if (c.training.stall_restarts > 0 && c.replicas_per_arm > 1) {
    e->Add("training.stall_restarts > 0 runs one trainer per arm; it cannot be combined with "
           "replicas_per_arm > 1");
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
  return rules.broken;
}

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
  m.exclude_self_layers = model.exclude_self_layers;
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
  // flashtick.v1.SweepConfig has no list of lists.
  if (absl::Status depth = CheckJsonNesting(json_text, kMaxJsonDepth, /*lists_of_lists=*/false);
      !depth.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("sweep config: ", depth.message()));
  }
  // The schema's JSON mapping checks the JSON, the field names and the types; an
  // unknown field is an error, so a typo never falls back to a default.
  v1::SweepConfig message;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto parsed = google::protobuf::util::JsonStringToMessage(json_text, &message, options);
  if (!parsed.ok()) {
    // Protobuf's message names the field and echoes the bad value (and a line of the
    // text, under a caret) whole. A client's bytes are made printable ASCII on one line
    // and cut, so no control byte or megabyte string reaches the status or the logs.
    std::string why;
    for (const char ch : absl::string_view(parsed.message().data(), parsed.message().size())) {
      if (why.size() == kMaxParserMessage) {
        absl::StrAppend(&why, "… (", parsed.message().size() - kMaxParserMessage, " more bytes)");
        break;
      }
      const auto u = static_cast<unsigned char>(ch);
      why.push_back(ch == '\n' ? ' ' : (u < 0x20 || u >= 0x7f) ? '?' : ch);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "sweep config: not the JSON of flashtick.v1.SweepConfig "
        "(proto/flashtick/v1/sweep_config.proto): ", why));
  }
  return SweepConfigFromProto(message);
}

std::string SweepConfigToJson(const SweepConfig& c, int indent) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = indent > 0;
  options.preserve_proto_field_names = true;
  std::string json;
  // Printing a message that was just built cannot fail: every string is valid UTF-8
  // (names and paths were checked as such when parsed).
  (void)google::protobuf::util::MessageToJsonString(SweepConfigToProto(c), &json, options);
  return json;
}

}  // namespace flashtick
