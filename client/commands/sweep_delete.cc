// `flashtick sweep delete ID`: removes a finished experiment (its record and its
// directory of checkpoints and reports) from the server. A queued or running one
// must be cancelled first.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "client/commands/sweep_client.h"
#include "client/commands/sweep_command.h"

namespace flashtick {

void AddSweepDelete(CLI::App* sweep, const ClientOptions* options, int* exit_code) {
  auto id = std::make_shared<std::string>();
  CLI::App* cmd = sweep->add_subcommand(
      "delete", "Delete a finished experiment and its files on the server.");
  cmd->add_option("id", *id, "experiment id")->required();
  cmd->callback([options, exit_code, id] {
    SweepClient client(*options);
    const absl::Status status = client.Delete(*id);
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      *exit_code = 2;
      return;
    }
    std::printf("%s: deleted\n", id->c_str());
    *exit_code = 0;
  });
}

}  // namespace flashtick
