// `flashtick stream`: replays one trading day through flashtick.v1.TickStream,
// one step at a time, and prints each step's prediction with its round-trip
// latency (send → answer, as a live client sees it) and the server's compute time.
// The day is a CSV (client/tick_csv.h; sent as feature rows) or
// SimpleSyntheticDay(SEED) (sent as raw ticks: the server computes the features).
#pragma once

#include "client/client_options.h"

namespace CLI {
class App;
}

namespace flashtick {

void AddStreamCommand(CLI::App* app, const ClientOptions* options, int* exit_code);

}  // namespace flashtick
