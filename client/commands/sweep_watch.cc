// `flashtick sweep watch ID`: the progress display. On a terminal one status line
// is redrawn in place (arm, fold, step, loss, epoch, ETA, with a bar); otherwise a
// line every few seconds and when an arm starts or ends, so logs stay readable. State
// changes always get their own line. When the experiment ends: the arms' cost and
// benefit and the verdict, in plain words.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "absl/strings/str_format.h"
#include "client/commands/sweep_client.h"
#include "client/commands/sweep_command.h"

namespace flashtick {
namespace {

constexpr double kPlainEverySeconds = 5.0;
constexpr int kBarWidth = 20;

std::string Bar(int64_t step, int64_t total) {
  const int filled = total > 0 ? static_cast<int>(kBarWidth * step / total) : 0;
  return "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "]";
}

std::string Line(const v1::ExperimentProgress& e) {
  return absl::StrFormat("%s arm %s (%d/%d) N=%d %-5s fold %d/%d %s step %d/%d loss %.4f "
                         "epoch %.2f ETA %s",
                         e.experiment_id(), e.arm_id(), e.arm_index() + 1, e.arms(),
                         e.context_length(), e.phase(), e.fold() + 1, e.folds(),
                         Bar(e.step(), e.total_steps()), e.step(), e.total_steps(), e.loss(),
                         e.epochs(), e.eta_seconds() >= 0 ? Duration(e.eta_seconds()) : "?");
}

void PrintSummary(const v1::Experiment& x) {
  std::printf("\n%s (%s): %s\n", x.id().c_str(), x.config().name().c_str(),
              StateName(x.state()).c_str());
  std::printf("%-10s %7s %-9s %11s %11s %10s %9s %9s\n", "arm", "N", "state", "steps",
              "tokens/s", "peak MiB", "accuracy", "Sharpe");
  for (const v1::ArmStatus& a : x.arms()) {
    std::printf("%-10s %7lld %-9s %5lld/%-5lld %11.0f %10.1f %9.4f %9.4f\n", a.arm_id().c_str(),
                static_cast<long long>(a.context_length()), a.arm_state().c_str(),
                static_cast<long long>(a.step()), static_cast<long long>(a.total_steps()),
                a.tokens_per_second(), a.peak_memory_bytes() / 1048576.0, a.accuracy(),
                a.sharpe());
  }
  if (!x.error().empty()) std::printf("error: %s\n", x.error().c_str());
  if (x.state() == v1::EXPERIMENT_STATE_SUCCEEDED) {
    std::printf("\nverdict: %s\n", x.verdict().summary().c_str());
    std::printf("report: flashtick sweep report %s --format markdown   (files in %s)\n",
                x.id().c_str(), x.directory().c_str());
  }
}

}  // namespace

int WatchExperiment(const ClientOptions& options, const std::string& id) {
  SweepClient client(options);
  const bool tty = isatty(fileno(stdout)) != 0;
  auto last_print = std::chrono::steady_clock::now() - std::chrono::hours(1);
  std::string last_arm;
  bool dirty = false;  // a redrawn line is on screen without its newline
  const absl::Status status = client.Watch(id, [&](const v1::ExperimentProgress& e) {
    if (e.phase() == "state") {
      if (dirty) std::printf("\n");
      dirty = false;
      std::printf("%s: %s%s%s\n", e.experiment_id().c_str(), StateName(e.state()).c_str(),
                  e.message().empty() ? "" : " — ", e.message().c_str());
      std::fflush(stdout);
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    // Plain output: a line when an arm starts or ends, else every few seconds.
    const bool edge = e.arm_id() != last_arm || e.phase() == "done";
    if (tty) {
      std::printf("\r\033[K%s", Line(e).c_str());
      dirty = true;
    } else if (edge ||
               std::chrono::duration<double>(now - last_print).count() >= kPlainEverySeconds) {
      std::printf("%s\n", Line(e).c_str());
      last_print = now;
    }
    last_arm = e.arm_id();
    std::fflush(stdout);
  });
  if (dirty) std::printf("\n");
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 2;
  }
  auto experiment = client.Get(id);
  if (!experiment.ok()) {
    std::fprintf(stderr, "%s\n", experiment.status().ToString().c_str());
    return 2;
  }
  PrintSummary(*experiment);
  return experiment->state() == v1::EXPERIMENT_STATE_SUCCEEDED ? 0 : 1;
}

void AddSweepWatch(CLI::App* sweep, const ClientOptions* options, int* exit_code) {
  auto id = std::make_shared<std::string>();
  CLI::App* cmd = sweep->add_subcommand("watch", "Follow an experiment until it ends.");
  cmd->add_option("id", *id, "experiment id (flashtick sweep list)")->required();
  cmd->callback([options, exit_code, id] { *exit_code = WatchExperiment(*options, *id); });
}

}  // namespace flashtick
