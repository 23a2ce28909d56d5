// RunClosedLoad: K clients, each sending its next ModelInfer when the last one is
// answered (load_gen --clients K). This is the workload of a trading process that asks
// for a prediction, waits for it and acts: the issue bars "one client" and "eight
// concurrent clients" are stated in it. Latency runs from each request's send to its
// answer, so a server that stalls is charged once per stalled request, not for the
// requests a stalled client never sent (the open-loop sweep, infer_load.h, measures
// those); read both side by side.
//
// Each client has its own channel (its own TCP connection, as separate processes
// would) and its own thread making blocking calls through gRPC's synchronous C++ API,
// so the client's share of a request is gRPC's C++ path and no interpreter.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "bench/load_gen/latency_histogram.h"
#include "client/client_options.h"
#include "inference/grpc_service.pb.h"
#include "nlohmann/json.hpp"

namespace flashtick::bench {

struct ClosedLoadSpec {
  int clients = 1;
  double warmup_s = 1;     // requests sent and answered, not recorded
  double duration_s = 5;   // the measured window: requests sent inside it are recorded
  int64_t expected_output_bytes = 0;  // of raw_output_contents(0); 0: not checked
};

struct ClosedLoadResult {
  int clients = 0;
  double window_s = 0;
  int64_t ok = 0;
  std::map<std::string, int64_t> errors;  // by gRPC status name (BAD_RESPONSE: OK, wrong size)
  LatencyHistogram latency_ns;            // send → answer of the OK recorded requests
  double wall_s = 0;                      // warmup, window and the last answers
  double cpu_s = 0;                       // the generator process's CPU over the run

  // OK answers a second over the window.
  double throughput_rps() const { return window_s > 0 ? ok / window_s : 0; }
};

// `request` is sent unchanged by every client. Errors: bad spec, or a client's channel
// that does not connect within 10 s.
absl::StatusOr<ClosedLoadResult> RunClosedLoad(const ClientOptions& client,
                                               const inference::ModelInferRequest& request,
                                               const ClosedLoadSpec& spec);

// JSON fields of the result (load_gen.cc adds the shared ones).
nlohmann::json ClosedLoadJson(const ClosedLoadResult& r);

}  // namespace flashtick::bench
