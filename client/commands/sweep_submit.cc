// `flashtick sweep submit`: sends a sweep (a preset name, or a JSON configuration
// file in the schema of research/sweep/sweep_config.h, as it is) and prints its id at
// once; with --watch, follows it to the end (sweep_watch.cc). The server resolves
// presets and validates the configuration; an unknown preset or a bad field comes
// back as INVALID_ARGUMENT naming it (docs/research/sweeps.md). The CLI keeps no copy
// of the parser or the presets, so it links neither research/ nor the model.
// --print-config asks the server (ResolveSweepConfig) for the full configuration a
// preset or file resolves to, as a starting point for edits; nothing is submitted.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "client/commands/sweep_client.h"
#include "client/commands/sweep_command.h"
#include "common/file_io.h"

namespace flashtick {
namespace {

struct SubmitArgs {
  std::string preset, config_file, request_key;
  bool watch = false, print_config = false;
};

int RunSubmit(const ClientOptions& options, const SubmitArgs& args) {
  if (args.preset.empty() == args.config_file.empty()) {
    std::fprintf(stderr, "sweep submit: give one of --preset (%s) and --config FILE\n",
                 "demo, demo_null, planted, planted_null, planted_small, planted_small_null");
    return 2;
  }
  v1::SubmitSweepRequest request;
  request.set_request_key(args.request_key);
  if (!args.preset.empty()) {
    request.set_preset(args.preset);
  } else {
    auto text = ReadFileToString(args.config_file);
    if (!text.ok()) {
      std::fprintf(stderr, "%s\n", text.status().ToString().c_str());
      return 2;
    }
    request.set_config_json(*std::move(text));
  }
  SweepClient client(options);
  if (args.print_config) {
    auto json = client.ResolveConfig(request);
    if (!json.ok()) {
      std::fprintf(stderr, "%s\n", json.status().ToString().c_str());
      return 2;
    }
    std::printf("%s\n", json->c_str());
    return 0;
  }
  auto experiment = client.Submit(request);
  if (!experiment.ok()) {
    std::fprintf(stderr, "%s\n", experiment.status().ToString().c_str());
    return 2;
  }
  std::printf("submitted %s (%s): %d arms, N = {", experiment->id().c_str(),
              experiment->config().name().c_str(), experiment->config().contexts_size() *
                                                        std::max(1, experiment->config().seeds_size()));
  for (int i = 0; i < experiment->config().contexts_size(); ++i) {
    std::printf("%s%lld", i ? ", " : "",
                static_cast<long long>(experiment->config().contexts(i)));
  }
  std::printf("}, state %s\n", StateName(experiment->state()).c_str());
  std::fflush(stdout);
  if (!args.watch) return 0;
  return WatchExperiment(options, experiment->id());
}

}  // namespace

void AddSweepSubmit(CLI::App* sweep, const ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<SubmitArgs>();
  CLI::App* cmd = sweep->add_subcommand("submit", "Submit an N-sweep; prints its id.");
  cmd->add_option("--preset", args->preset,
                  "a built-in sweep: demo (CPU, minutes), demo_null, planted (GPU), planted_null, "
                  "planted_small (CPU, planted scaled by 1/64), planted_small_null");
  cmd->add_option("--config", args->config_file,
                  "a JSON sweep configuration (see --print-config for every field)");
  cmd->add_option("--request-key", args->request_key,
                  "idempotency key: a second submit with it returns the first experiment");
  cmd->add_flag("--watch", args->watch, "follow the sweep until it ends, then print the verdict");
  cmd->add_flag("--print-config", args->print_config,
                "print the full configuration the server resolves the preset or file to, "
                "and exit (nothing is submitted)");
  cmd->callback([options, exit_code, args] { *exit_code = RunSubmit(*options, *args); });
}

}  // namespace flashtick
