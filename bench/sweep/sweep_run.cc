// flashtick_sweep: one N-sweep without the server.
//   flashtick_sweep (--preset NAME | --config FILE) --dir DIR [--device cpu|cuda|auto]
//                   [--threads N] [--python PY] [--plot-script PATH]
//                   [--print-config]
// Runs (or resumes: DIR keeps the checkpoints) every arm, prints one progress line
// every few seconds and the verdict at the end, and leaves report.json, report.md
// and the plots in DIR. Exit code 0 when the sweep ran (whatever the verdict), 1 on
// an error, 2 on bad arguments. The server runs the same engine (server/experiments).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "kernels/attention_impl_flag.h"
#include "common/file_io.h"
#include "research/report/plot_runner.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_engine.h"
#include "research/sweep/sweep_presets.h"

namespace {

constexpr double kPrintEverySeconds = 5.0;

}  // namespace

int main(int argc, char** argv) {
  std::string preset, config_path, dir, device = "auto", python = "python3";
  std::string plot_script = flashtick::DefaultPlotScript();
  int threads = 0;
  bool print_config = false;
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help prints and exits 0
  }
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "flashtick_sweep: %s (see --help)\n", why.c_str());
    return 2;
  };
  if (preset.empty() == config_path.empty()) return usage("give one of --preset and --config");
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
