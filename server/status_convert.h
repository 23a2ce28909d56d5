// The one place where an absl::Status becomes a grpc::Status, so every RPC maps the same
// code to the same gRPC status and no handler invents its own mapping.
// Every layer below the RPC handlers speaks absl::Status; handlers call
// ToGrpcStatus exactly once, when they Finish. The codes are the same canonical
// codes in both libraries, so the mapping is one-to-one and keeps the message.
#pragma once

#include <string>

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace flashtick {

// Messages longer than this are cut (noting the original length): they ride in an
// HTTP/2 trailer, and client strings quoted in them must not overflow it.
inline constexpr size_t kMaxStatusMessageBytes = 2048;

grpc::Status ToGrpcStatus(const absl::Status& status);

// The canonical name of a status code ("OK", "INVALID_ARGUMENT", ...): the value
// of the `code` label in flashtick_requests_total.
std::string StatusCodeName(const absl::Status& status);

}  // namespace flashtick
