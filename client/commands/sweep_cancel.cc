// `flashtick sweep cancel ID`: a queued experiment is cancelled at once; a running
// one stops between two training steps, keeping the arms that finished (and a
// report of them). Prints the experiment's state after the request.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "client/commands/sweep_client.h"
#include "client/commands/sweep_command.h"

namespace flashtick {
namespace {

int RunCancel(const ClientOptions& options, const std::string& id) {
  SweepClient client(options);
  auto experiment = client.Cancel(id);
  if (!experiment.ok()) {
    std::fprintf(stderr, "%s\n", experiment.status().ToString().c_str());
    return 2;
  }
  const bool running = experiment->state() == v1::EXPERIMENT_STATE_RUNNING;
  std::printf("%s: %s%s\n", id.c_str(), StateName(experiment->state()).c_str(),
              running ? " (stops after the current step; finished arms are kept)" : "");
  return 0;
}

}  // namespace

void AddSweepCancel(CLI::App* sweep, const ClientOptions* options, int* exit_code) {
  auto id = std::make_shared<std::string>();
  CLI::App* cmd = sweep->add_subcommand("cancel", "Cancel an experiment; finished arms are kept.");
  cmd->add_option("id", *id, "experiment id")->required();
  cmd->callback([options, exit_code, id] { *exit_code = RunCancel(*options, *id); });
}

}  // namespace flashtick
