// The Prometheus /metrics HTTP endpoint (prometheus-cpp's Exposer over civetweb).
// Why a wrapper: civetweb reports why it could not start (bind, listen, thread
// creation) only through its log callback; the Exposer turns every failure into
// "null context ... possible problem binding to port". StartMetricsEndpoint keeps
// civetweb's own messages and returns them in the status, so an operator reads
// "cannot bind to 127.0.0.1:9090: 98 (Address already in use)" rather than a guess.
#pragma once

#include <memory>
#include <string>

#include <prometheus/exposer.h>

#include "absl/status/statusor.h"

namespace flashtick {

// Listens on host:port (port 0 picks a free one) with `threads` civetweb workers.
// A connection that has not sent its request within request_timeout_ms is
// dropped, so a few silent clients cannot hold every worker (civetweb's default
// is 30 s each).
absl::StatusOr<std::unique_ptr<prometheus::Exposer>> StartMetricsEndpoint(
    const std::string& host, int port, int threads, int request_timeout_ms = 5000);

}  // namespace flashtick
