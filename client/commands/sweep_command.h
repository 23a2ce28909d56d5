// `flashtick sweep submit|watch|list|cancel|delete|report|promote`: N-sweeps on flashtickd's
// Experiments service (docs/research/sweeps.md). Each subcommand is one file
// (client/commands/sweep_<name>.cc); AddSweepCommand registers them all.
//   submit (--preset NAME | --config FILE) [--request-key K] [--watch]
//   watch ID          progress until the experiment ends, then its verdict
//   list [--state S] [--limit N]
//   cancel ID         stops it; finished arms and their results are kept
//   report ID [--format json|markdown] [--out DIR]
//   delete ID         removes a finished experiment and its files
//   promote ID --model NAME [--arm ARM]
//                     serves the winning (or named) arm as the model's next version
// Exit codes: 0 done (whatever the verdict), 1 the experiment failed or was
// cancelled, 2 an RPC or argument error.
#pragma once

#include <string>

#include "client/client_options.h"

namespace CLI {
class App;
}

namespace flashtick {

void AddSweepCommand(CLI::App* app, const ClientOptions* options, int* exit_code);

// Subcommand registration (one file each) and the watch loop submit --watch uses.
void AddSweepSubmit(CLI::App* sweep, const ClientOptions* options, int* exit_code);
void AddSweepWatch(CLI::App* sweep, const ClientOptions* options, int* exit_code);
void AddSweepList(CLI::App* sweep, const ClientOptions* options, int* exit_code);
void AddSweepCancel(CLI::App* sweep, const ClientOptions* options, int* exit_code);
void AddSweepDelete(CLI::App* sweep, const ClientOptions* options, int* exit_code);
void AddSweepReport(CLI::App* sweep, const ClientOptions* options, int* exit_code);
void AddSweepPromote(CLI::App* sweep, const ClientOptions* options, int* exit_code);
int WatchExperiment(const ClientOptions& options, const std::string& id);

}  // namespace flashtick
