// RunInferLoad: one offered rate of open-loop ModelInfer load on one thread, through
// gRPC's asynchronous client API (one CompletionQueue, so thousands of requests can
// be in flight without a thread each). See load_gen.cc for why open loop.
#pragma once

#include <cstdint>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "bench/load_gen/rate_result.h"
#include "inference/grpc_service.grpc.pb.h"

namespace flashtick::bench {

struct InferLoadSpec {
  double rate_per_s = 100;
  double warmup_s = 1;      // sent and answered, not recorded
  double duration_s = 5;    // the measured window
  int64_t max_inflight = 10000;
  double timeout_s = 30;    // per-call deadline (an overloaded server's answer is DEADLINE_EXCEEDED)
  uint64_t seed = 1;
  int64_t expected_output_bytes = 0;  // of raw_output_contents(0); 0: not checked
  // The last ~2.5 ms before a send: poll the queue without sleeping (one core busy;
  // send lag and answer pick-up in microseconds) instead of polls between 20 µs sleeps
  // (Linux timer slack makes those ~70 µs).
  bool spin = false;
};

// The stub must outlive the call; `request` is serialized at each send, so it is
// shared by every call. Returns an error only when the run itself could not happen.
absl::StatusOr<RateResult> RunInferLoad(inference::GRPCInferenceService::Stub* stub,
                                        const inference::ModelInferRequest& request,
                                        const InferLoadSpec& spec);

}  // namespace flashtick::bench
