// `flashtick sweep` (see sweep_command.h): the parent command.
#include "client/commands/sweep_command.h"

#include <CLI/CLI.hpp>

namespace flashtick {

void AddSweepCommand(CLI::App* app, const ClientOptions* options, int* exit_code) {
  CLI::App* sweep = app->add_subcommand(
      "sweep",
      "N-sweeps: train one arm per context length N walk-forward and gate the longest by "
      "Deflated Sharpe and PBO (submit, watch, list, cancel, delete, report, promote).");
  sweep->require_subcommand(1);
  AddSweepSubmit(sweep, options, exit_code);
  AddSweepWatch(sweep, options, exit_code);
  AddSweepList(sweep, options, exit_code);
  AddSweepCancel(sweep, options, exit_code);
  AddSweepDelete(sweep, options, exit_code);
  AddSweepReport(sweep, options, exit_code);
  AddSweepPromote(sweep, options, exit_code);
}

}  // namespace flashtick
