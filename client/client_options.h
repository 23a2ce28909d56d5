// ClientOptions: what every `flashtick` subcommand shares (server address and
// per-call deadline), and the channel they open. The channel lifts gRPC's 4 MiB
// receive cap so a full day of probabilities ([1, 23,400, 3] FP32 ≈ 0.28 MB per
// row, more with batches) always comes back; the server enforces its own limit.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

namespace flashtick {

struct ClientOptions {
  std::string server = "localhost:8001";
  // A full day on a few CPU cores takes minutes; on a GPU, milliseconds.
  double timeout_seconds = 600;
};

std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& options);
// Sets the per-call deadline from options.timeout_seconds.
void SetDeadline(const ClientOptions& options, grpc::ClientContext* context);

}  // namespace flashtick
