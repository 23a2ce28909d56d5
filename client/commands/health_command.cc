// `flashtick health` (see health_command.h).
#include "client/commands/health_command.h"

#include <cstdio>

#include <CLI/CLI.hpp>

#include "client/inference_client.h"

namespace flashtick {
namespace {

int RunHealth(const ClientOptions& options) {
  InferenceClient client(options);
  auto live = client.ServerLive();
  if (!live.ok()) {
    std::fprintf(stderr, "%s: %s\n", options.server.c_str(), live.status().ToString().c_str());
    return 2;
  }
  auto ready = client.ServerReady();
  auto health = client.HealthCheck("");
  std::printf("server   %s\n", options.server.c_str());
  std::printf("live     %s\n", *live ? "yes" : "no");
  std::printf("ready    %s\n", ready.ok() ? (*ready ? "yes" : "no") : ready.status().ToString().c_str());
  std::printf("health   %s\n",
              health.ok() ? grpc::health::v1::HealthCheckResponse::ServingStatus_Name(*health).c_str()
                          : health.status().ToString().c_str());
  const bool ok = *live && ready.ok() && *ready && health.ok() &&
                  *health == grpc::health::v1::HealthCheckResponse::SERVING;
  return ok ? 0 : 1;
}

}  // namespace

void AddHealthCommand(CLI::App* app, const ClientOptions* options, int* exit_code) {
  CLI::App* cmd = app->add_subcommand(
      "health", "Is the server live, ready and SERVING (grpc.health.v1)? Exit 0 when it is.");
  cmd->callback([options, exit_code] { *exit_code = RunHealth(*options); });
}

}  // namespace flashtick
