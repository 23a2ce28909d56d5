// `flashtick predict`: sends one trading day to ModelInfer and prints a readable
// summary (steps, last-step probabilities, argmax shares, latency, kernel path).
// The day comes from a CSV (client/tick_csv.h) or from SimpleSyntheticDay(SEED)
// (ticks/features.h). --output writes every returned step's probabilities;
// --save-features writes the features sent, replayable with --csv.
#pragma once

#include "client/client_options.h"

namespace CLI {
class App;
}

namespace flashtick {

void AddPredictCommand(CLI::App* app, const ClientOptions* options, int* exit_code);

}  // namespace flashtick
