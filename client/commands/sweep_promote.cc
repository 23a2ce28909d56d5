// `flashtick sweep promote ID --model NAME [--arm ARM]`: serves a SUCCEEDED
// experiment's arm as the next version of a model in flashtickd's model repository,
// loaded at once without a restart (flashtick.v1.Experiments/PromoteArm). Without
// --arm the server promotes the winner: the median seed of the verdict's best N.
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "client/commands/sweep_client.h"
#include "client/commands/sweep_command.h"

namespace flashtick {

void AddSweepPromote(CLI::App* sweep, const ClientOptions* options, int* exit_code) {
  auto id = std::make_shared<std::string>();
  auto model = std::make_shared<std::string>();
  auto arm = std::make_shared<std::string>();
  CLI::App* cmd = sweep->add_subcommand(
      "promote",
      "Serve a finished sweep's arm as the next version of a model in the server's model "
      "repository, loaded at once (no restart). Without --arm: the winner, the median seed "
      "(by daily Sharpe) of the verdict's best N.");
  cmd->add_option("id", *id, "experiment id (it must have SUCCEEDED)")->required();
  cmd->add_option("--model", *model,
                  "model name: one directory under the server's --model-repository; the new "
                  "version is 1 + the highest one there")
      ->required();
  cmd->add_option("--arm", *arm,
                  "arm id to promote (e.g. n4096, or n4096-s2 with several seeds; `flashtick "
                  "sweep watch ID` lists them); default: the winning arm");
  cmd->callback([options, exit_code, id, model, arm] {
    v1::PromoteArmRequest request;
    request.set_experiment_id(*id);
    request.set_model_name(*model);
    request.set_arm_id(*arm);
    SweepClient client(*options);
    const auto promoted = client.Promote(request);
    if (!promoted.ok()) {
      std::fprintf(stderr, "%s\n", promoted.status().ToString().c_str());
      *exit_code = 2;
      return;
    }
    std::printf("%s: promoted arm %s to model %s version %lld (%s)\n", id->c_str(),
                promoted->arm_id().c_str(), promoted->model_name().c_str(),
                static_cast<long long>(promoted->version()), promoted->path().c_str());
    *exit_code = 0;
  });
}

}  // namespace flashtick
