// train_step benchmark: one training step of the tick transformer — AdamW, and
// Sophia-H with exact Hessian-vector products (reverse over reverse, attention through
// our backward-over-backward) — per sequence length N (default 512, 4,096, 23,400,
// 32,768), B sequences, bf16 compute with fp32 masters on CUDA. Prints JSON lines
// (docs/benchmarks.md schema): ms (Sophia-H: amortised over its Hessian interval k from the
// measured refresh and plain steps), ms_plain, ms_refresh, tokens_per_s, tflops (the
// fwd+bwd work of TrainStepFlops, for both optimizers, so Sophia-H's figure shows the
// cost of its HVPs as lost throughput), peak_bytes (allocator high-water mark: weights,
// optimizer state, activations; peak_bytes_plain and peak_bytes_refresh split it by
// whether the step refreshed Sophia-H's Hessian estimate), oom.
// --curve-n N --curve-steps S: also train S steps at N with each optimizer on
// --curve-batches synthetic batches in turn and print one "loss_curve" line per step;
// --dump-dir writes those batches and the initial weights for torch_train_step.py.
// Runs on --device cpu too (small shapes: the ctest smoke run).
// --attention-impl auto|flash|cudnn picks the CUDA attention (kernels/attention_dispatch.h).
// --profile-nodes: per-node timing of the timed steps (trainer/step_profiler.h): a table
// per optimizer and N on stderr, for the plain and the refresh steps, and the same rows
// in the JSON line as profile_plain / profile_refresh.
#include <fstream>
#include <iostream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/train_step/train_step_run.h"
#include "common/status_macros.h"
#include "kernels/attention_dispatch.h"
#include "nlohmann/json.hpp"

namespace flashtick::bench {
namespace {

struct Args {
  std::string device = "cuda", json_path, dump_dir, commit = "unknown", gpu = "unknown";
  std::vector<int64_t> ns = {512, 4096, 23400, 32768};
  std::vector<OptimizerKind> optimizers = {OptimizerKind::kAdamW, OptimizerKind::kSophiaH};
  ModelConfig model;
  int64_t B = 1, warmup = 2, steps = 6, k = 10, curve_n = 0, curve_steps = 0, curve_batches = 8;
  bool profile_nodes = false;
};

absl::Status ParseList(const std::string& flag, const std::string& v, std::vector<int64_t>* out) {
  out->clear();
  for (absl::string_view p : absl::StrSplit(v, ',')) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(p, &n) || n < 1)
      return absl::InvalidArgumentError(absl::StrCat(flag, ": bad value ", std::string(p)));
    out->push_back(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  a.model.name = "bench-train-step";
  a.model.width = 768, a.model.heads = 12, a.model.kv_heads = 12, a.model.layers = 4;
  a.model.max_context = 1 << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--profile-nodes") {  // the one flag without a value
      a.profile_nodes = true;
      continue;
    }
    if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
    const std::string v = argv[++i];
    int64_t n = 0;
    auto num = [&](int64_t* out) -> absl::Status {
      if (!absl::SimpleAtoi(v, out)) return absl::InvalidArgumentError(absl::StrCat(flag, ": ", v));
      return absl::OkStatus();
    };
    if (flag == "--device")
      a.device = v;
    else if (flag == "--attention-impl") {
      // docs/kernels/cudnn.md: which attention the CUDA step runs (default auto).
      auto impl = ParseAttentionImpl(v);
      RETURN_IF_ERROR(impl.status());
      SetAttentionImplOverride(*impl);
    }
    else if (flag == "--n")
      RETURN_IF_ERROR(ParseList(flag, v, &a.ns));
    else if (flag == "--optimizers") {
      a.optimizers.clear();
      for (absl::string_view p : absl::StrSplit(v, ',')) {
        ASSIGN_OR_RETURN(OptimizerKind kind, ParseOptimizerKind(std::string(p)));
        a.optimizers.push_back(kind);
      }
    } else if (flag == "--b")
      RETURN_IF_ERROR(num(&a.B));
    else if (flag == "--width") {
      RETURN_IF_ERROR(num(&n));
      a.model.width = static_cast<int>(n);
    } else if (flag == "--heads") {
      RETURN_IF_ERROR(num(&n));
      a.model.heads = a.model.kv_heads = static_cast<int>(n);
    } else if (flag == "--kv-heads") {
      RETURN_IF_ERROR(num(&n));
      a.model.kv_heads = static_cast<int>(n);
    } else if (flag == "--layers") {
      RETURN_IF_ERROR(num(&n));
      a.model.layers = static_cast<int>(n);
    } else if (flag == "--warmup")
      RETURN_IF_ERROR(num(&a.warmup));
    else if (flag == "--steps")
      RETURN_IF_ERROR(num(&a.steps));
    else if (flag == "--hessian-interval")
      RETURN_IF_ERROR(num(&a.k));
    else if (flag == "--curve-n")
      RETURN_IF_ERROR(num(&a.curve_n));
    else if (flag == "--curve-steps")
      RETURN_IF_ERROR(num(&a.curve_steps));
    else if (flag == "--curve-batches")
      RETURN_IF_ERROR(num(&a.curve_batches));
    else if (flag == "--json")
      a.json_path = v;
    else if (flag == "--dump-dir")
      a.dump_dir = v;
    else if (flag == "--commit")
      a.commit = v;
    else if (flag == "--gpu")
      a.gpu = v;
    else
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag ", flag,
          "; flags: --device cuda|cpu --n 512,4096 --optimizers adamw,sophia_h "
          "--b --width --heads --kv-heads --layers --warmup --steps --hessian-interval --curve-n "
          "--curve-steps --curve-batches --json PATH --dump-dir DIR --commit SHA --gpu NAME "
          "--profile-nodes"));
  }
  RETURN_IF_ERROR(a.model.Validate());
  return a;
}

// A profile as JSON: per-step figures (the profile sums its steps).
nlohmann::json ProfileJson(const StepProfile& p) {
  const double n = p.steps > 0 ? static_cast<double>(p.steps) : 1.0;
  nlohmann::json rows = nlohmann::json::array();
  for (const ProfileRow& r : p.rows)
    rows.push_back({{"phase", r.phase},
                    {"kind", r.kind},
                    {"ms_per_step", r.ms / n},
                    {"count_per_step", static_cast<double>(r.count) / n},
                    {"share", r.share}});
  return {{"steps", p.steps}, {"total_ms_per_step", p.total_ms / n}, {"rows", rows}};
}

// The options both benchmark modes use: the published defaults of each optimizer.
TrainerOptions OptionsFor(OptimizerKind kind, const Args& a) {
  TrainerOptions o;
  o.optimizer = kind;
  o.hyper = OptimizerHyper::Defaults(kind);
  o.lr = LrSchedule{kind == OptimizerKind::kAdamW ? 1e-3 : 5e-4, 10, 0, 0.1};
  o.hessian_interval = a.k;
  o.seed = 1;
  return o;
}

absl::Status Main(int argc, char** argv) {
  ASSIGN_OR_RETURN(Args a, Parse(argc, argv));
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> be, CreateBackend(a.device));
  std::ofstream json;
  if (!a.json_path.empty()) json.open(a.json_path, std::ios::app);
  auto emit = [&](const nlohmann::json& j) {
    std::cout << j.dump() << std::endl;
    if (json.is_open()) json << j.dump() << "\n" << std::flush;
  };
  const ModelConfig& m = a.model;
  const std::string impl = "flashtick_" + be->name();
  for (OptimizerKind kind : a.optimizers) {
    for (int64_t n : a.ns) {
      RunSpec spec{m,
                   OptionsFor(kind, a),
                   a.B,
                   n,
                   static_cast<int>(a.warmup),
                   static_cast<int>(a.steps),
                   1,
                   a.profile_nodes};
      nlohmann::json j = {{"bench", "train_step"},
                          {"op", OptimizerKindName(kind)},
                          {"impl", impl},
                          {"B", a.B},
                          {"H", m.heads},
                          {"N", n},
                          {"d", m.head_dim()},
                          {"causal", true},
                          {"dtype", a.device == "cpu" ? "fp32" : "bf16"},
                          {"layers", m.layers},
                          {"width", m.width},
                          {"hessian_interval", a.k},
                          {"gpu", a.gpu},
                          {"commit", a.commit}};
      absl::StatusOr<StepTiming> r = RunTrainSteps(spec, be.get());
      if (!r.ok() && absl::IsResourceExhausted(r.status())) {
        j["oom"] = true;
        j["error"] = std::string(r.status().message());
      } else if (!r.ok()) {
        j["oom"] = false;
        j["error"] = std::string(r.status().message());  // recorded, and the run goes on
      } else {
        j["oom"] = false;
        j["ms"] = r->ms;
        j["ms_plain"] = r->ms_plain;
        j["ms_refresh"] = r->ms_refresh;
        j["tokens_per_s"] = static_cast<double>(a.B * n) / (r->ms * 1e-3);
        j["tflops"] = TrainStepFlops(m, a.B, n) / (r->ms * 1e-3) / 1e12;
        j["peak_bytes"] = r->peak_bytes;
        j["peak_bytes_plain"] = r->peak_bytes_plain;
        j["peak_bytes_refresh"] = r->peak_bytes_refresh;
        j["model_bytes"] = r->model_bytes;
        j["final_loss"] = r->losses.back();
        if (a.profile_nodes) {
          for (const auto& [key, prof] : {std::pair{"profile_plain", &r->profile_plain},
                                          std::pair{"profile_refresh", &r->profile_refresh}}) {
            if (prof->steps == 0) continue;
            j[key] = ProfileJson(*prof);
            std::cerr << "== " << OptimizerKindName(kind) << " N=" << n << " "
                      << (prof == &r->profile_plain ? "plain" : "refresh") << " steps ("
                      << impl << ")\n"
                      << prof->Table() << "-- by phase\n"
                      << prof->ByPhase().Table() << std::flush;
          }
        }
      }
      // Which attention kernels the step ran: on CUDA the measuring dispatcher may have
      // picked cuDNN's (docs/kernels/cudnn.md), which `impl` (the backend) does not say.
      OpDesc attn;
      attn.dtype = a.device == "cpu" ? DType::kF32 : DType::kBF16;
      attn.attention.causal = true;
      attn.attention.head_dim = static_cast<int>(m.head_dim());
      attn.op = Op::kAttentionFwd;
      std::string kernels = be->KernelPath(attn);
      attn.op = Op::kAttentionBwd;
      j["attention_kernels"] = absl::StrCat(kernels, "+", be->KernelPath(attn));
      emit(j);
    }
  }
  if (a.curve_n > 0 && a.curve_steps > 0) {
    for (OptimizerKind kind : a.optimizers) {
      RunSpec spec{m, OptionsFor(kind, a), a.B, a.curve_n, 0, 0, 1000};
      if (!a.dump_dir.empty())
        RETURN_IF_ERROR(DumpData(spec, a.curve_batches, a.dump_dir, be.get()));
      ASSIGN_OR_RETURN(std::unique_ptr<Trainer> t, Trainer::Create(m, spec.options, be.get()));
      for (int64_t s = 0; s < a.curve_steps; ++s) {
        const TrainBatch b = SyntheticBatch(a.B, a.curve_n, m.features, 1000 + s % a.curve_batches);
        ASSIGN_OR_RETURN(StepStats st, t->TrainStep(b.ticks, b.labels, a.B, a.curve_n));
        emit({{"bench", "train_step"},
              {"op", "loss_curve"},
              {"optimizer", OptimizerKindName(kind)},
              {"impl", impl},
              {"B", a.B},
              {"N", a.curve_n},
              {"step", st.step},
              {"loss", st.loss},
              {"grad_norm", st.grad_norm},
              {"ms", st.step_seconds * 1e3},
              {"hessian_refreshed", st.hessian_refreshed},
              {"gpu", a.gpu},
              {"commit", a.commit}});
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace flashtick::bench

int main(int argc, char** argv) {
  absl::Status s = flashtick::bench::Main(argc, argv);
  if (!s.ok()) {
    std::cerr << "train_step_bench: " << s << "\n";
    return 1;
  }
  return 0;
}
