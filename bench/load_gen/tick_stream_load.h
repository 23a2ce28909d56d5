// RunTickStream: one trading day streamed over flashtick.v1.TickStream, per-tick
// latency measured by a C++ client (load_gen --tick-stream). The Python client of
// bench/serve_latency spends part of each tick in the interpreter and in grpcio's
// threads; this one keeps the client's share to gRPC's own C++ path, so what it
// reports is the server's answer time plus loopback.
//
// A stream is sequential by contract (a step is answered before the next is useful:
// docs/serving.md, "Tick-stream limits"), so each tick is sent when the previous one
// is answered and timed from its send: closed loop is the workload here, not a
// measurement artefact as it would be for independent ModelInfer requests.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "bench/load_gen/latency_histogram.h"
#include "flashtick/v1/tick_stream.grpc.pb.h"
#include "nlohmann/json.hpp"

namespace flashtick::bench {

struct TickStreamSpec {
  std::string model, model_version;
  int64_t ticks = 23400;   // feature rows streamed (a 6.5 h session at 1 s)
  int64_t warmup = 0;      // of them, the first not recorded (the state's first step allocates it)
  int64_t features = 0;    // F; 0: the session's `opened.features`
  double timeout_s = 3600; // the whole stream's deadline
  uint64_t seed = 1;       // of the feature rows
};

struct TickStreamResult {
  v1::SessionOpened opened;
  LatencyHistogram latency_ns;  // send → answer read, per recorded tick
  LatencyHistogram compute_ns;  // the server's compute_seconds of the same ticks
  int64_t answered = 0;         // every tick, warmup included
  double wall_s = 0;            // open to Finish
};

// Errors: the stream refused or broken (its gRPC status), or an answer for the wrong
// step or with no probabilities (DATA_LOSS).
absl::StatusOr<TickStreamResult> RunTickStream(v1::TickStream::Stub* stub,
                                               const TickStreamSpec& spec);

// The result's JSON fields: what "tick" and impl "load_gen_grpc", so that
// bench/serve_latency/latency_table.py puts it beside the Python client's tick row.
nlohmann::json TickStreamJson(const TickStreamResult& r, const TickStreamSpec& spec);

}  // namespace flashtick::bench
