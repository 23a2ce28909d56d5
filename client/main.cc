// flashtick: the command-line client of flashtickd.
//   flashtick [--server host:port] [--timeout s] [--tls-ca ca.pem] [--tls-cert c.pem
//             --tls-key c.key] [--token-file f] health|models|predict|sweep ...
// Each subcommand lives in client/commands/<name>_command.{h,cc} and registers
// itself on the app; `sweep submit|watch|list|cancel|report` joins
// them the same way.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "client/client_options.h"
#include "client/commands/health_command.h"
#include "client/commands/models_command.h"
#include "client/commands/predict_command.h"
#include "client/commands/stream_command.h"
#include "client/commands/sweep_command.h"

int main(int argc, char** argv) {
  flashtick::ClientOptions options;
  int exit_code = 0;
  CLI::App app{"flashtick: client for the flashtickd tick-transformer server"};
  app.add_option("--server", options.server, "flashtickd gRPC address host:port")
      ->capture_default_str();
  app.add_option("--timeout", options.timeout_seconds, "per-call deadline in seconds")
      ->capture_default_str();
  flashtick::AddClientSecurityFlags(&app, &options);
  // Runs after the flags are parsed and before any subcommand's callback, so a
  // bad TLS or token file stops the CLI before it dials.
  app.parse_complete_callback([&options] {
    if (absl::Status s = flashtick::LoadClientSecurity(&options); !s.ok()) {
      throw CLI::ValidationError(std::string(s.message()));
    }
  });
  app.require_subcommand(1);
  flashtick::AddHealthCommand(&app, &options, &exit_code);
  flashtick::AddModelsCommand(&app, &options, &exit_code);
  flashtick::AddPredictCommand(&app, &options, &exit_code);
  flashtick::AddStreamCommand(&app, &options, &exit_code);
  flashtick::AddSweepCommand(&app, &options, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
