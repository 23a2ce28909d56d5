// data_parallel benchmark (docs/multi_gpu.md): the training step of one sweep arm at sequence
// length N, on 1 replica and on R replicas (DataParallelTrainer: R GPUs summing
// through NCCL with buckets overlapped with the backward pass, or R CPU backends),
// for a fixed global batch B (strong scaling: each replica takes B/R sequences, as
// an arm's tokens per step are fixed by its plan). Prints JSON lines: ms (Sophia-H
// amortised over --k from the median refresh and plain steps), tokens_per_s, and
// scaling_efficiency = (ms with 1 replica)/(R · ms with R), 1.0 = linear. Also
// "final_loss" of the timed steps, equal across R up to the order of the sums.
#include <algorithm>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/train_step/train_step_run.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "research/parallel/data_parallel_trainer.h"

namespace flashtick::bench {
namespace {

struct Args {
  std::string device = "cuda", commit = "unknown", gpu = "unknown";
  int64_t n = 23400, B = 2, warmup = 2, steps = 6, k = 10, interval = 3;
  std::vector<int64_t> replicas = {1, 2};
  std::vector<OptimizerKind> optimizers = {OptimizerKind::kAdamW, OptimizerKind::kSophiaH};
  ModelConfig model;
};

// The flags; with --help, prints it and sets *help_shown.
absl::StatusOr<Args> Parse(int argc, char** argv, bool* help_shown) {
  Args a;
  a.model.name = "bench-data-parallel";
  a.model.width = 768, a.model.heads = 12, a.model.kv_heads = 12, a.model.layers = 4;
  a.model.max_context = 1 << 20;
  std::vector<std::string> optimizers = {"adamw", "sophia_h"};
  const CLI::Range kAtLeastOne(1, std::numeric_limits<int>::max());
  CLI::App app{
      "One sweep arm's training step at length N on 1 and on R replicas (strong scaling: a "
      "fixed global batch B, B/R sequences a replica), through NCCL on GPUs or the host "
      "all-reducer on the CPU. Prints one JSON line per (optimizer, R).",
      "data_parallel_bench"};
  app.add_option("--device", a.device, "cuda or cpu")->capture_default_str();
  app.add_option("--commit", a.commit, "Recorded in each line")->capture_default_str();
  app.add_option("--gpu", a.gpu, "Recorded in each line")->capture_default_str();
  app.add_option("--n", a.n, "Sequence length N")->check(kAtLeastOne)->capture_default_str();
  app.add_option("--batch", a.B, "Global batch B (sequences a step)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "Untimed steps first")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--steps", a.steps, "Timed steps")->check(kAtLeastOne)->capture_default_str();
  app.add_option("--k", a.k, "Sophia-H refresh interval the time is amortised over")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--hessian-interval", a.interval, "Sophia-H refresh interval of the timed steps")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--width", a.model.width, "Model width")->check(kAtLeastOne)->capture_default_str();
  app.add_option_function<int>(
         "--heads", [&a](int h) { a.model.heads = a.model.kv_heads = h; },
         "Attention heads, also the K/V heads (default 12)")
      ->check(kAtLeastOne);
  app.add_option("--layers", a.model.layers, "Layers")->check(kAtLeastOne)->capture_default_str();
  app.add_option("--replicas", a.replicas, "Replica counts, comma-separated")
      ->delimiter(',')
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--optimizers", optimizers, "Optimizers, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *help_shown = app.exit(e) == 0;  // prints the help, or the error to stderr
    return absl::InvalidArgumentError(e.what());
  }
  a.optimizers.clear();
  for (const std::string& name : optimizers) {
    ASSIGN_OR_RETURN(OptimizerKind kind, ParseOptimizerKind(name));
    a.optimizers.push_back(kind);
  }
  return a;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One (optimizer, R) measurement as a JSON object (with "error" on failure).
nlohmann::json Measure(const Args& a, OptimizerKind kind, int R, const TrainBatch& batch) {
  nlohmann::json rec = {{"bench", "data_parallel"}, {"op", OptimizerKindName(kind)},
                        {"impl", R == 1 ? "flashtick" : (a.device == "cuda" ? "flashtick_nccl"
                                                                           : "flashtick_host")},
                        {"replicas", R}, {"B", a.B}, {"N", a.n}, {"width", a.model.width},
                        {"heads", a.model.heads}, {"layers", a.model.layers},
                        {"hessian_interval", a.k}, {"gpu", a.gpu}, {"commit", a.commit}};
  TrainerOptions o;
  o.optimizer = kind;
  o.hyper = OptimizerHyper::Defaults(kind);
  o.lr.peak = kind == OptimizerKind::kAdamW ? 1e-3 : 5e-4;
  o.lr.warmup_steps = 10;
  o.lr.total_steps = 1000;
  o.hessian_interval = a.interval;  // refreshes among the timed steps; amortised at k
  o.seed = 1;
  DataParallelOptions dp;
  dp.device = a.device;
  dp.replicas = R;
  auto t = DataParallelTrainer::Create(a.model, o, dp);
  if (!t.ok()) return rec.update({{"error", t.status().ToString()}}), rec;
  std::vector<double> plain, refresh;
  double loss = 0;
  int64_t peak = 0;
  for (int64_t s = 0; s < a.warmup + a.steps; ++s) {
    auto st = (*t)->TrainStep(batch.ticks, batch.labels, a.B, a.n);
    if (!st.ok()) return rec.update({{"error", st.status().ToString()}}), rec;
    if (s < a.warmup) continue;
    (st->hessian_refreshed ? refresh : plain).push_back(st->step_seconds * 1e3);
    loss = st->loss;
    peak = std::max(peak, st->peak_memory_bytes);
  }
  const double mp = Median(plain), mr = Median(refresh);
  double ms = mp;
  if (kind == OptimizerKind::kSophiaH && !refresh.empty() && !plain.empty())
    ms = (mr + (a.k - 1) * mp) / a.k;
  rec.update({{"ms", ms}, {"ms_plain", mp}, {"ms_refresh", mr},
              {"tokens_per_s", a.B * a.n / (ms * 1e-3)},
              {"tflops", TrainStepFlops(a.model, a.B, a.n) / (mp * 1e-3) / 1e12},
              {"peak_bytes", peak}, {"final_loss", loss}});
  if (R > 1) {
    const BucketedAllReducer& red = (*t)->reducer(0);
    rec.update({{"buckets", red.plan().buckets().size()},
                {"buckets_launched_during_backward", red.launched_early()},
                {"buckets_launched_after", red.launched_late()}});
  }
  return rec;
}

int Main(int argc, char** argv) {
  bool help_shown = false;
  auto args = Parse(argc, argv, &help_shown);
  if (help_shown) return 0;
  if (!args.ok()) {
    std::cout << nlohmann::json({{"error", args.status().ToString()}}).dump() << std::endl;
    return 2;
  }
  const Args& a = *args;
  const TrainBatch batch = SyntheticBatch(a.B, a.n, a.model.features, 7);
  for (OptimizerKind kind : a.optimizers) {
    double ms1 = 0;
    for (int64_t R : a.replicas) {
      nlohmann::json rec = Measure(a, kind, static_cast<int>(R), batch);
      if (rec.contains("ms")) {
        if (R == 1) ms1 = rec["ms"].get<double>();
        if (ms1 > 0) rec["scaling_efficiency"] = ms1 / (R * rec["ms"].get<double>());
      }
      std::cout << rec.dump() << std::endl;
    }
  }
  return 0;
}

}  // namespace
}  // namespace flashtick::bench

int main(int argc, char** argv) { return flashtick::bench::Main(argc, argv); }
