// flashtick_sweep: one N-sweep without the server.
//   flashtick_sweep (--preset NAME | --config FILE) --dir DIR [--device cpu|cuda|auto]
//                   [--threads N] [--python PY] [--plot-script PATH]
//                   [--print-config]
//   flashtick_sweep --run-arm --dir DIR [--arm-index K | --arm-indexes I0,I1,...]
//                   [--device cpu|cuda|auto] [--threads N]
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
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kernels/attention_impl_flag.h"
#include "common/file_io.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "research/report/plot_runner.h"
#include "research/sweep/run_location.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_engine.h"
#include "research/sweep/sweep_presets.h"

namespace {

constexpr double kPrintEverySeconds = 5.0;

std::atomic<bool> g_stop{false};  // SIGTERM (a deleted Job's pod): stop at a checkpoint

extern "C" void OnTerm(int) { g_stop = true; }

// The planned arm this --run-arm process trains: `index` (or $JOB_COMPLETION_INDEX when
// it is −1), through `indexes` ("2,5,7": completion index k trains arms[k]) when given.
absl::StatusOr<int> ChosenArm(int index, const std::string& indexes) {
  if (index < 0) {
    const char* env = std::getenv("JOB_COMPLETION_INDEX");
    if (env == nullptr || !absl::SimpleAtoi(env, &index) || index < 0) {
      return absl::InvalidArgumentError(
          "--run-arm needs --arm-index or a non-negative JOB_COMPLETION_INDEX");
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

// --run-arm: one arm of the sweep recorded in dir/config.json.
int RunArm(const std::string& dir, int index, const std::string& indexes,
           const flashtick::SweepEngineOptions& options, const flashtick::SweepHooks& hooks) {
  absl::StatusOr<int> arm = ChosenArm(index, indexes);
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
  std::printf("arm %d of %s on %s\n", *arm, dir.c_str(), flashtick::RunLocation().c_str());
  std::fflush(stdout);
  auto result = flashtick::SweepEngine::RunOneArm(*config, options, *arm, hooks);
  if (!result.ok()) {
    std::fprintf(stderr, "arm %d failed: %s\n", *arm, result.status().ToString().c_str());
    return 1;
  }
  std::printf("arm %s: %s\n", result->arm_id.c_str(), flashtick::ArmStateName(result->state));
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
    return RunArm(dir, arm_index, arm_indexes, options, hooks);
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
