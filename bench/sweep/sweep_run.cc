// flashtick_sweep: one N-sweep without the server.
//   flashtick_sweep (--preset NAME | --config FILE) --dir DIR [--device cpu|cuda|auto]
//                   [--threads N] [--python PY] [--plot-script PATH] [--set-days N]
//                   [--print-config]
// Runs (or resumes: DIR keeps the checkpoints) every arm, prints one progress line
// every few seconds and the verdict at the end, and leaves report.json, report.md
// and the plots in DIR. Exit code 0 when the sweep ran (whatever the verdict), 1 on
// an error, 2 on bad arguments. The server runs the same engine (server/experiments).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "model/file_io.h"
#include "train/report/plot_runner.h"
#include "train/sweep/sweep_config.h"
#include "train/sweep/sweep_engine.h"
#include "train/sweep/sweep_presets.h"

namespace {

constexpr double kPrintEverySeconds = 5.0;

int Usage(const char* why) {
  std::fprintf(stderr,
               "flashtick_sweep: %s\nusage: flashtick_sweep (--preset NAME | --config FILE) "
               "--dir DIR [--device cpu|cuda|auto] [--threads N] [--python PY] "
               "[--plot-script PATH] [--print-config]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset, config_path, dir, device = "auto", python = "python3";
  std::string plot_script = flashtick::DefaultPlotScript();
  int threads = 0;
  bool print_config = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--print-config") {
      print_config = true;
      continue;
    }
    if ((v = value()) == nullptr) return Usage(("missing value after " + a).c_str());
    if (a == "--preset") preset = v;
    else if (a == "--config") config_path = v;
    else if (a == "--dir") dir = v;
    else if (a == "--device") device = v;
    else if (a == "--threads") threads = std::atoi(v);
    else if (a == "--python") python = v;
    else if (a == "--plot-script") plot_script = v;
    else return Usage(("unknown argument " + a).c_str());
  }
  if (preset.empty() == config_path.empty()) return Usage("give one of --preset and --config");
  absl::StatusOr<std::string> text = preset.empty() ? flashtick::ReadFileToString(config_path)
                                                    : flashtick::SweepPresetJson(preset);
  if (!text.ok()) return Usage(std::string(text.status().message()).c_str());
  auto config = flashtick::ParseSweepConfig(*text);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    return 2;
  }
  if (print_config) {
    std::printf("%s\n", flashtick::SweepConfigToJson(*config).c_str());
    return 0;
  }
  if (dir.empty()) return Usage("--dir is required");

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
