// data_parallel_rank: one rank of a multi-process data-parallel training run
// (docs/multi_gpu.md, multi-process), or with --world-size 1 the in-process reference
// over --replicas threads. Rank, world size and the store's address come from torchrun's
// environment (RANK or JOB_COMPLETION_INDEX, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// LOCAL_RANK), overridden by the flags. Trains a small synthetic arm for --steps steps
// (a fresh synthetic global batch each step, the same on every rank) and prints one JSON
// line per step: {"rank", "world_size", "replicas", "step", "loss"}, the loss with
// round-trip precision, then {"rank", "weights_fnv1a"}: a hash of the final weights'
// bits. tests/parallel/multi_process_test.py compares runs by both, bit for bit. On
// failure prints {"error": ...} and exits 1.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "bench/train_step/train_step_run.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "research/parallel/data_parallel_trainer.h"
#include "research/parallel/process_group.h"
#include "research/parallel/process_group_config.h"
#include "research/parallel/process_group_trainer.h"

namespace flashtick::bench {
namespace {

struct Args {
  std::string device = "cpu", optimizer = "adamw", port_file;
  int64_t n = 16, B = 4, steps = 4, interval = 2, replicas = 1, die_at_step = -1,
          stall_at_step = -1;
  double bucket_kib = 1, rendezvous_timeout = 30, collective_timeout = 300;
  ProcessGroupFlags pg;
  ModelConfig model;
};

absl::StatusOr<Args> Parse(int argc, char** argv, bool* help_shown) {
  Args a;
  a.model.name = "data-parallel-rank";
  a.model.width = 16, a.model.heads = 2, a.model.kv_heads = 2, a.model.layers = 1;
  const CLI::Range kAtLeastOne(1, std::numeric_limits<int>::max());
  CLI::App app{
      "One rank of a multi-process data-parallel run (TCP all-reduce on the CPU, NCCL on "
      "GPUs), or with --world-size 1 the in-process run over --replicas threads. Prints one "
      "JSON line per step with the loss.",
      "data_parallel_rank"};
  app.add_option_function<int>(
      "--world-size", [&a](int v) { a.pg.world_size = v; },
      "Processes in the job (default: $WORLD_SIZE, else 1)");
  app.add_option_function<int>(
      "--rank", [&a](int v) { a.pg.rank = v; },
      "This process's rank (default: $RANK, else "
      "$JOB_COMPLETION_INDEX, else 0)");
  app.add_option_function<std::string>(
      "--master-addr", [&a](const std::string& v) { a.pg.master_addr = v; },
      "Rank 0's host (default: $MASTER_ADDR, else 127.0.0.1)");
  app.add_option_function<int>(
      "--master-port", [&a](int v) { a.pg.master_port = v; },
      "Rank 0's store port (default: $MASTER_PORT, else 29500); 0 on "
      "rank 0 picks a free one (see --port-file)");
  app.add_option("--port-file", a.port_file,
                 "Rank 0: write the store's port here once it listens (for --master-port 0)");
  app.add_option("--device", a.device, "cpu or cuda")->capture_default_str();
  app.add_option("--replicas", a.replicas, "With --world-size 1: in-process replicas (threads)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--n", a.n, "Sequence length")->check(kAtLeastOne)->capture_default_str();
  app.add_option("--batch", a.B, "Global batch (sequences a step)")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--steps", a.steps, "Steps")->check(kAtLeastOne)->capture_default_str();
  app.add_option("--width", a.model.width, "Model width")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option_function<int>(
         "--heads", [&a](int h) { a.model.heads = a.model.kv_heads = h; },
         "Attention heads, also the K/V heads (default 2)")
      ->check(kAtLeastOne);
  app.add_option("--layers", a.model.layers, "Layers")->check(kAtLeastOne)->capture_default_str();
  app.add_option("--optimizer", a.optimizer, "adamw or sophia_h")->capture_default_str();
  app.add_option("--hessian-interval", a.interval, "Sophia-H refresh interval")
      ->check(kAtLeastOne)
      ->capture_default_str();
  app.add_option("--bucket-kib", a.bucket_kib,
                 "Gradient bucket size in KiB (small: buckets launch during the backward)")
      ->capture_default_str();
  app.add_option("--rendezvous-timeout", a.rendezvous_timeout, "Seconds to wait for every rank")
      ->capture_default_str();
  app.add_option("--collective-timeout", a.collective_timeout,
                 "Seconds a CPU all-reduce may go without progress")
      ->capture_default_str();
  app.add_option("--die-at-step", a.die_at_step,
                 "Failure test: this process kills itself (SIGKILL) when it reaches this step");
  app.add_option("--stall-at-step", a.stall_at_step,
                 "Failure test: this process stops (sleeps for an hour) at this step");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *help_shown = app.exit(e) == 0;
    return absl::InvalidArgumentError(e.what());
  }
  return a;
}

TrainerOptions MakeTrainerOptions(const Args& a, OptimizerKind kind) {
  TrainerOptions o;
  o.optimizer = kind;
  o.hyper = OptimizerHyper::Defaults(kind);
  o.lr.peak = kind == OptimizerKind::kAdamW ? 1e-3 : 5e-4;
  o.lr.warmup_steps = 2;
  o.lr.total_steps = 1000;
  o.hessian_interval = a.interval;
  o.seed = 1;
  return o;
}

void PrintStep(const Args& a, int rank, int world, int64_t step, double loss) {
  std::cout << nlohmann::json({{"rank", rank},
                               {"world_size", world},
                               {"replicas", a.replicas},
                               {"step", step},
                               {"loss", loss}})
                   .dump()
            << std::endl;
}

// FNV-1a (64-bit) over the bytes of the weights as fp64, in hex.
absl::Status PrintWeightsHash(Trainer& t, int rank) {
  ASSIGN_OR_RETURN(std::vector<double> w, t.params().ToHost(t.params().values()));
  uint64_t h = 14695981039346656037ull;
  const auto* p = reinterpret_cast<const unsigned char*>(w.data());
  for (size_t i = 0; i < w.size() * sizeof(double); ++i) h = (h ^ p[i]) * 1099511628211ull;
  std::cout
      << nlohmann::json({{"rank", rank}, {"weights_fnv1a", absl::StrCat(absl::Hex(h))}}).dump()
      << std::endl;
  return absl::OkStatus();
}

void MaybeDie(const Args& a, int64_t step) {
  if (step == a.die_at_step) raise(SIGKILL);  // as the OOM killer or a lost node would
  if (step == a.stall_at_step) std::this_thread::sleep_for(std::chrono::hours(1));  // a hung rank
}

// --world-size 1: the in-process reference (DataParallelTrainer over --replicas threads).
absl::Status RunInProcess(const Args& a, OptimizerKind kind) {
  DataParallelOptions dp;
  dp.device = a.device;
  dp.replicas = static_cast<int>(a.replicas);
  dp.bucket_bytes = static_cast<int64_t>(a.bucket_kib * 1024);
  ASSIGN_OR_RETURN(auto t, DataParallelTrainer::Create(a.model, MakeTrainerOptions(a, kind), dp));
  for (int64_t s = 0; s < a.steps; ++s) {
    MaybeDie(a, s);
    const TrainBatch batch = SyntheticBatch(a.B, a.n, a.model.features, 7 + s);
    ASSIGN_OR_RETURN(StepStats st, t->TrainStep(batch.ticks, batch.labels, a.B, a.n));
    PrintStep(a, 0, 1, s, st.loss);
  }
  return PrintWeightsHash(t->replica(0), 0);
}

absl::Status RunRank(const Args& a, OptimizerKind kind, const ProcessGroupConfig& config) {
  ASSIGN_OR_RETURN(auto group, ProcessGroup::Create(config, a.rendezvous_timeout));
  if (config.rank == 0 && !a.port_file.empty()) {
    const std::string tmp = a.port_file + ".tmp";
    std::ofstream(tmp) << group->port() << "\n";
    if (std::rename(tmp.c_str(), a.port_file.c_str()) != 0)
      return absl::InternalError(absl::StrCat("cannot write --port-file ", a.port_file));
  }
  RETURN_IF_ERROR(group->Rendezvous());
  ProcessGroupTrainerOptions pg;
  pg.device = a.device;
  pg.bucket_bytes = static_cast<int64_t>(a.bucket_kib * 1024);
  pg.collective_timeout_seconds = a.collective_timeout;
  ASSIGN_OR_RETURN(auto t,
                   ProcessGroupTrainer::Create(a.model, MakeTrainerOptions(a, kind), pg, *group));
  for (int64_t s = 0; s < a.steps; ++s) {
    MaybeDie(a, s);
    const TrainBatch batch = SyntheticBatch(a.B, a.n, a.model.features, 7 + s);
    ASSIGN_OR_RETURN(StepStats st, t->TrainStep(batch.ticks, batch.labels, a.B, a.n));
    PrintStep(a, config.rank, config.world_size, s, st.loss);
  }
  RETURN_IF_ERROR(PrintWeightsHash(t->trainer(), config.rank));
  return group->Leave();
}

int Main(int argc, char** argv) {
  bool help_shown = false;
  absl::StatusOr<Args> args = Parse(argc, argv, &help_shown);
  if (help_shown) return 0;
  absl::Status s = args.status();
  if (s.ok()) {
    absl::StatusOr<OptimizerKind> kind = ParseOptimizerKind(args->optimizer);
    absl::StatusOr<ProcessGroupConfig> config = ResolveProcessGroupConfig(args->pg, ProcessEnv());
    if (!kind.ok()) {
      s = kind.status();
    } else if (!config.ok()) {
      s = config.status();
    } else if (config->world_size > 1 && args->replicas != 1) {
      s = absl::InvalidArgumentError("--replicas (threads) is for --world-size 1 only");
    } else {
      s = config->world_size == 1 ? RunInProcess(*args, *kind) : RunRank(*args, *kind, *config);
    }
  }
  if (s.ok()) return 0;
  std::cout << nlohmann::json({{"error", s.ToString()}}).dump() << std::endl;
  std::cerr << "data_parallel_rank: " << s << std::endl;
  return 1;
}

}  // namespace
}  // namespace flashtick::bench

int main(int argc, char** argv) { return flashtick::bench::Main(argc, argv); }
