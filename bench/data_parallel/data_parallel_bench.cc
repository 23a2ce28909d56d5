// data_parallel benchmark (issue 9): the training step of one sweep arm at sequence
// length N, on 1 replica and on R replicas (DataParallelTrainer: R GPUs summing
// through NCCL with buckets overlapped with the backward pass, or R CPU backends),
// for a fixed global batch B (strong scaling: each replica takes B/R sequences, as
// an arm's tokens per step are fixed by its plan). Prints JSON lines: ms (Sophia-H
// amortised over --k from the median refresh and plain steps), tokens_per_s, and
// scaling_efficiency = (ms with 1 replica)/(R · ms with R), 1.0 = linear. Also
// "final_loss" of the timed steps, equal across R up to the order of the sums.
#include <algorithm>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/train_step/train_step_run.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "train/parallel/data_parallel_trainer.h"

namespace flashtick::bench {
namespace {

struct Args {
  std::string device = "cuda", commit = "unknown", gpu = "unknown";
  int64_t n = 23400, B = 2, warmup = 2, steps = 6, k = 10, interval = 3;
  std::vector<int64_t> replicas = {1, 2};
  std::vector<OptimizerKind> optimizers = {OptimizerKind::kAdamW, OptimizerKind::kSophiaH};
  ModelConfig model;
};

absl::StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  a.model.name = "bench-data-parallel";
  a.model.width = 768, a.model.heads = 12, a.model.kv_heads = 12, a.model.layers = 4;
  a.model.max_context = 1 << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
    const std::string v = argv[++i];
    int64_t x = 0;
    const bool is_num = absl::SimpleAtoi(v, &x) && x >= 1;
    auto need_num = [&]() -> absl::Status {
      if (!is_num) return absl::InvalidArgumentError(absl::StrCat(flag, ": bad value ", v));
      return absl::OkStatus();
    };
    if (flag == "--device") a.device = v;
    else if (flag == "--commit") a.commit = v;
    else if (flag == "--gpu") a.gpu = v;
    else if (flag == "--n") { RETURN_IF_ERROR(need_num()); a.n = x; }
    else if (flag == "--batch") { RETURN_IF_ERROR(need_num()); a.B = x; }
    else if (flag == "--warmup") { RETURN_IF_ERROR(need_num()); a.warmup = x; }
    else if (flag == "--steps") { RETURN_IF_ERROR(need_num()); a.steps = x; }
    else if (flag == "--k") { RETURN_IF_ERROR(need_num()); a.k = x; }
    else if (flag == "--hessian-interval") { RETURN_IF_ERROR(need_num()); a.interval = x; }
    else if (flag == "--width") { RETURN_IF_ERROR(need_num()); a.model.width = x; }
    else if (flag == "--heads") { RETURN_IF_ERROR(need_num()); a.model.heads = a.model.kv_heads = x; }
    else if (flag == "--layers") { RETURN_IF_ERROR(need_num()); a.model.layers = x; }
    else if (flag == "--replicas") {
      a.replicas.clear();
      for (absl::string_view p : absl::StrSplit(v, ',')) {
        int64_t r = 0;
        if (!absl::SimpleAtoi(p, &r) || r < 1)
          return absl::InvalidArgumentError(absl::StrCat("--replicas: bad value ", v));
        a.replicas.push_back(r);
      }
    } else if (flag == "--optimizers") {
      a.optimizers.clear();
      for (absl::string_view p : absl::StrSplit(v, ',')) {
        ASSIGN_OR_RETURN(OptimizerKind kind, ParseOptimizerKind(std::string(p)));
        a.optimizers.push_back(kind);
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag));
    }
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
  auto args = Parse(argc, argv);
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
