// `flashtick models`: server metadata, then each served model's metadata
// (versions, platform, input and output tensors) and readiness.
#pragma once

#include "client/client_options.h"

namespace CLI {
class App;
}

namespace flashtick {

void AddModelsCommand(CLI::App* app, const ClientOptions* options, int* exit_code);

}  // namespace flashtick
