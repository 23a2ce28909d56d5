// `flashtick health`: liveness and readiness (KServe ServerLive/ServerReady) and
// the standard grpc.health.v1 status. Exit code 0 only when live, ready and
// SERVING, so scripts and probes can use it.
#pragma once

#include "client/client_options.h"

namespace CLI {
class App;
}

namespace flashtick {

// Adds the subcommand; its result goes to *exit_code.
void AddHealthCommand(CLI::App* app, const ClientOptions* options, int* exit_code);

}  // namespace flashtick
