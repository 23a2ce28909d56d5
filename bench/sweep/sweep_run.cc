// flashtick_sweep: one N-sweep without the server.
//   flashtick_sweep (--preset NAME | --config FILE) --dir DIR [--device cpu|cuda|auto]
//                   [--threads N] [--python PY] [--plot-script PATH]
//                   [--print-config]
//   flashtick_sweep --run-arm --dir DIR [--arm-index K | --arm-indexes I0,I1,...]
//                   [--device cpu|cuda|auto] [--threads N]
//                   [--world-size W --rank R --master-addr A --master-port P]
// Runs (or resumes: DIR keeps the checkpoints) every arm, prints one progress line
// every few seconds and the verdict at the end, and leaves report.json, report.md
// and the plots in DIR. Exit code 0 when the sweep ran (whatever the verdict), 1 on
// an error, 2 on bad arguments. The server runs the same engine (server/experiments).
// --run-arm trains one planned arm of the sweep whose config.json is in DIR (the
// coordinator's experiment directory on a shared volume) into DIR/arms/<arm_id>/,
// where the coordinator's resume finds it, and exits (0: the arm finished; 1: it
// failed or was stopped by SIGTERM after a checkpoint). The arm: --arm-index, else
// $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's pod index), mapped through
// --arm-indexes when given (the coordinator's list of unfinished arms). With --run-arm,
// --device cpu or cuda overrides the config's device (the coordinator resolved it).
// docs/deploy.md, "Sweep arms as Kubernetes Jobs".
// With a world size W > 1 (--world-size, else $WORLD_SIZE) the arm trains data-parallel
// over W processes, one replica each (docs/multi_gpu.md, "One sweep arm over
// processes"): the rank comes from --rank, else $RANK, else $JOB_COMPLETION_INDEX (a
// pod's index in an Indexed Job of W pods); rank 0 serves the rendezvous store on
// --master-port ($MASTER_PORT) and the others reach it at --master-addr ($MASTER_ADDR).
// The arm index is then --arm-index, else $FLASHTICK_ARM_INDEX, never
// $JOB_COMPLETION_INDEX. Every rank exits 0 when the arm finished; when a rank dies the
// others fail their next collective and exit 1.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kernels/attention_impl_flag.h"
#include "common/file_io.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "research/parallel/process_group.h"
#include "research/parallel/process_group_config.h"
#include "research/report/plot_runner.h"
#include "research/sweep/rank_arm.h"
#include "research/sweep/run_location.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_engine.h"
#include "research/sweep/sweep_presets.h"

namespace {

constexpr double kPrintEverySeconds = 5.0;

std::atomic<bool> g_stop{false};  // SIGTERM (a deleted Job's pod): stop at a checkpoint

extern "C" void OnTerm(int) { g_stop = true; }

// The planned arm this --run-arm process trains: `index` (or, when it is −1,
// $JOB_COMPLETION_INDEX alone, $FLASHTICK_ARM_INDEX over processes, where the completion
// index is the rank), through `indexes` ("2,5,7": index k trains arms[k]) when given.
absl::StatusOr<int> ChosenArm(int index, const std::string& indexes, bool over_processes) {
  if (index < 0) {
    const char* name = over_processes ? "FLASHTICK_ARM_INDEX" : "JOB_COMPLETION_INDEX";
    const char* env = std::getenv(name);
    if (env == nullptr || !absl::SimpleAtoi(env, &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--run-arm needs --arm-index or a non-negative ", name,
          over_processes ? " (over processes JOB_COMPLETION_INDEX is the rank)" : ""));
    }
  }
  if (indexes.empty()) return index;
  std::vector<int> arms;
  for (absl::string_view part : absl::StrSplit(indexes, ',')) {
    int a = 0;
    if (!absl::SimpleAtoi(part, &a) || a < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--arm-indexes: bad index '", part, "'"));
    }
    arms.push_back(a);
  }
  if (index >= static_cast<int>(arms.size())) {
    return absl::InvalidArgumentError(absl::StrCat("index ", index, " is past the ", arms.size(),
                                                   " arms of --arm-indexes"));
  }
  return arms[index];
}

// How an arm over processes meets: the flags over torchrun's environment.
struct GroupFlags {
  flashtick::ProcessGroupFlags flags;
  double rendezvous_timeout_seconds = 300;  // pods of one Job may start minutes apart
  double collective_timeout_seconds = 300;
};

// Whether the arm runs over processes: a world size over 1 from the flag or $WORLD_SIZE
// (a world of one keeps $JOB_COMPLETION_INDEX the arm index, as before).
bool OverProcesses(const GroupFlags& g) {
  if (g.flags.world_size.has_value()) return *g.flags.world_size > 1;
  const char* env = std::getenv("WORLD_SIZE");
  int w = 1;
  return env != nullptr && env[0] != '\0' && !(absl::SimpleAtoi(env, &w) && w == 1);
}

// This rank's process group, rendezvoused; nullptr with the error printed.
std::unique_ptr<flashtick::ProcessGroup> JoinGroup(const GroupFlags& g) {
  auto config = flashtick::ResolveProcessGroupConfig(g.flags, flashtick::ProcessEnv());
  if (!config.ok()) {
    std::fprintf(stderr, "flashtick_sweep: %s\n", std::string(config.status().message()).c_str());
    return nullptr;
  }
  auto group = flashtick::ProcessGroup::Create(*config, g.rendezvous_timeout_seconds);
  absl::Status s = group.ok() ? (*group)->Rendezvous() : group.status();
  if (!s.ok()) {
    std::fprintf(stderr, "flashtick_sweep: rank %d of %d: %s\n", config->rank,
                 config->world_size, s.ToString().c_str());
    return nullptr;
  }
  (*group)->set_collective_timeout_seconds(g.collective_timeout_seconds);
  return *std::move(group);
}

// --run-arm: one arm of the sweep recorded in dir/config.json.
int RunArm(const std::string& dir, int index, const std::string& indexes, const GroupFlags& g,
           flashtick::SweepEngineOptions options, const flashtick::SweepHooks& hooks) {
  const bool over_processes = OverProcesses(g);
  absl::StatusOr<int> arm = ChosenArm(index, indexes, over_processes);
  if (!arm.ok()) {
    std::fprintf(stderr, "flashtick_sweep: %s\n", std::string(arm.status().message()).c_str());
    return 2;
  }
  auto text = flashtick::ReadFileToString(dir + "/config.json");
  if (!text.ok()) {
    std::fprintf(stderr, "flashtick_sweep: %s\n", text.status().ToString().c_str());
    return 1;
  }
  auto config = flashtick::ParseSweepConfig(*text);
  if (!config.ok()) {
    std::fprintf(stderr, "%s/config.json: %s\n", dir.c_str(), config.status().ToString().c_str());
    return 1;
  }
  std::signal(SIGTERM, OnTerm);
  std::unique_ptr<flashtick::ProcessGroup> group;
  std::string who;
  if (over_processes) {
    // Before the rendezvous, so every rank refuses a config that does not fit the world
    // on its own (rank_arm.h, CheckReplicasForWorld).
    if (auto pg = flashtick::ResolveProcessGroupConfig(g.flags, flashtick::ProcessEnv()); pg.ok()) {
      if (absl::Status s = flashtick::CheckReplicasForWorld(*config, pg->world_size); !s.ok()) {
        std::fprintf(stderr, "arm %d as rank %d of %d failed: %s\n", *arm, pg->rank,
                     pg->world_size, s.ToString().c_str());
        return 1;
      }
    }
    group = JoinGroup(g);
    if (group == nullptr) return 1;
    options.process_group = group.get();
    who = absl::StrCat(" as rank ", group->rank(), " of ", group->world_size());
  }
  std::printf("arm %d of %s on %s%s\n", *arm, dir.c_str(), flashtick::RunLocation().c_str(),
              who.c_str());
  std::fflush(stdout);
  auto result = flashtick::SweepEngine::RunOneArm(*config, options, *arm, hooks);
  if (!result.ok()) {
    // Exits without leaving: the other ranks see this process's connections close.
    std::fprintf(stderr, "arm %d%s failed: %s\n", *arm, who.c_str(),
                 result.status().ToString().c_str());
    return 1;
  }
  if (group != nullptr) {
    if (absl::Status s = group->Leave(); !s.ok()) {
      std::fprintf(stderr, "arm %d%s: %s\n", *arm, who.c_str(), s.ToString().c_str());
      return 1;
    }
  }
  std::printf("arm %s%s: %s\n", result->arm_id.c_str(), who.c_str(),
              flashtick::ArmStateName(result->state));
  return result->state == flashtick::ArmState::kDone ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset, config_path, dir, device = "auto", python = "python3";
  std::string plot_script = flashtick::DefaultPlotScript();
  int threads = 0;
  bool print_config = false;
  bool run_arm = false;
  int arm_index = -1;
  std::string arm_indexes;
  CLI::App app{
      "Runs (or resumes: --dir keeps the checkpoints) one N-sweep without the server: every "
      "arm walk-forward, then the report (report.json, report.md, plots) in --dir. Exit 0 "
      "when the sweep ran, whatever its verdict; 1 on an error; 2 on bad arguments.",
      "flashtick_sweep"};
  auto* preset_opt = app.add_option("--preset", preset, "A built-in sweep")
                         ->check(CLI::IsMember(flashtick::SweepPresetNames()));
  auto* config_opt = app.add_option("--config", config_path, "A sweep configuration (JSON) file")
                         ->check(CLI::ExistingFile);
  preset_opt->excludes(config_opt);
  app.add_option("--dir", dir, "Working and report directory");
  app.add_option("--device", device, "Where arms train")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  flashtick::AddAttentionImplFlag(&app);
  app.add_option("--threads", threads, "CPU threads (0: all cores)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--python", python, "Python for the plots")->capture_default_str();
  app.add_option("--plot-script", plot_script, "Plot script (empty: no plots)")
      ->capture_default_str();
  app.add_flag("--print-config", print_config,
               "Print the resolved configuration (defaults filled in) and exit");
  app.add_flag("--run-arm", run_arm,
               "Train one planned arm of the sweep in --dir (its config.json) and exit");
  app.add_option("--arm-index", arm_index,
                 "The arm --run-arm trains (-1: $JOB_COMPLETION_INDEX)")
      ->check(CLI::Range(-1, 1 << 20))
      ->capture_default_str();
  app.add_option("--arm-indexes", arm_indexes,
                 "Comma-separated planned arm indexes; --run-arm's index picks one of them");
  GroupFlags group;
  app.add_option("--world-size", group.flags.world_size,
                 "--run-arm over processes: ranks in the arm (default $WORLD_SIZE, else 1)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--rank", group.flags.rank,
                 "This process's rank (default $RANK, else $JOB_COMPLETION_INDEX)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--master-addr", group.flags.master_addr,
                 "Rank 0's host (default $MASTER_ADDR, else 127.0.0.1)");
  app.add_option("--master-port", group.flags.master_port,
                 "Rank 0's rendezvous port (default $MASTER_PORT, else 29500)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--rendezvous-timeout", group.rendezvous_timeout_seconds,
                 "Seconds to wait for every rank at the rendezvous (and the store's calls)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--collective-timeout", group.collective_timeout_seconds,
                 "Seconds a collective may move no data before it fails")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help prints and exits 0
  }
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "flashtick_sweep: %s (see --help)\n", why.c_str());
    return 2;
  };
  if (run_arm) {
    if (dir.empty()) return usage("--dir is required");
    if (!preset.empty() || !config_path.empty()) {
      return usage("--run-arm reads --dir's config.json; no --preset or --config");
    }
  } else if (preset.empty() == config_path.empty()) {
    return usage("give one of --preset and --config");
  }
  flashtick::SweepEngineOptions options;
  options.dir = dir;
  options.device = device;
  options.cpu_threads = threads;
  options.python = python;
  options.plot_script = plot_script;
  auto last = std::chrono::steady_clock::now() - std::chrono::seconds(60);
  flashtick::SweepHooks hooks;
  hooks.on_progress = [&](const flashtick::SweepEvent& e) {
    const auto now = std::chrono::steady_clock::now();
    const bool edge = e.arm.phase != "train" || e.arm.step == e.arm.total_steps;
    if (!edge && std::chrono::duration<double>(now - last).count() < kPrintEverySeconds) return;
    last = now;
    std::printf("[%s N=%lld] %-5s fold %d/%d step %lld/%lld loss %.4f epoch %.2f eta %.0fs\n",
                e.arm.arm_id.c_str(), static_cast<long long>(e.arm.context), e.arm.phase.c_str(),
                e.arm.fold + 1, e.arm.folds, static_cast<long long>(e.arm.step),
                static_cast<long long>(e.arm.total_steps), e.arm.loss, e.arm.epoch,
                e.eta_seconds);
    std::fflush(stdout);
  };
  if (run_arm) {
    hooks.cancel = &g_stop;
    return RunArm(dir, arm_index, arm_indexes, group, options, hooks);
  }
  absl::StatusOr<std::string> text = preset.empty() ? flashtick::ReadFileToString(config_path)
                                                    : flashtick::SweepPresetJson(preset);
  if (!text.ok()) return usage(std::string(text.status().message()));
  auto config = flashtick::ParseSweepConfig(*text);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    return 2;
  }
  if (print_config) {
    std::printf("%s\n", flashtick::SweepConfigToJson(*config).c_str());
    return 0;
  }
  if (dir.empty()) return usage("--dir is required");
  auto outcome = flashtick::SweepEngine::Run(*config, options, hooks);
  if (!outcome.ok()) {
    std::fprintf(stderr, "sweep failed: %s\n", outcome.status().ToString().c_str());
    return 1;
  }
  for (const flashtick::ArmResult& a : outcome->arms) {
    auto m = a.Pooled();
    std::printf("arm %-8s N=%-6lld acc %.4f macroF1 %.4f logloss %.4f sharpe %.4f  "
                "%.2f s/epoch %.0f tok/s peak %.1f MiB  events",
                a.arm_id.c_str(), static_cast<long long>(a.context), m.ok() ? m->accuracy : 0,
                m.ok() ? m->macro_f1 : 0, m.ok() ? m->log_loss : 0, a.Sharpe(),
                a.seconds_per_epoch(), a.tokens_per_second(), a.peak_memory_bytes / 1048576.0);
    for (const flashtick::EventTally& t : a.events) std::printf(" L%lld:%.3f", static_cast<long long>(t.lag), t.rate());
    std::printf("\n");
  }
  if (outcome->verdict.has_value()) {
    std::printf("verdict: %s\n", outcome->verdict->Summary().c_str());
  } else {
    std::printf("verdict: none (%s)\n", outcome->verdict_error.c_str());
  }
  if (outcome->precision.ran) {
    std::printf("precision: %s: max rel logit err %.3g, flips %lld/%lld\n",
                outcome->precision.note.c_str(), outcome->precision.max_rel_logit_error,
                static_cast<long long>(outcome->precision.flips),
                static_cast<long long>(outcome->precision.positions));
  }
  std::printf("report: %s/report.md (%s)\n", dir.c_str(),
              outcome->plots_note.empty() ? "with plots" : outcome->plots_note.c_str());
  return 0;
}
