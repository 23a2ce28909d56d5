// absl::Status -> grpc::Status. Both enumerate the canonical codes of
// google.rpc.Code with the same numbers (OK=0 ... UNAUTHENTICATED=16); the
// static_asserts pin that so a library change cannot silently remap codes.
#include "server/status_convert.h"

#include <string>

namespace flashtick {
namespace {

static_assert(static_cast<int>(absl::StatusCode::kInvalidArgument) ==
              static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
static_assert(static_cast<int>(absl::StatusCode::kResourceExhausted) ==
              static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED));
static_assert(static_cast<int>(absl::StatusCode::kUnauthenticated) ==
              static_cast<int>(grpc::StatusCode::UNAUTHENTICATED));

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  int code = static_cast<int>(status.code());
  // Codes outside the canonical range (absl allows any int) have no gRPC twin.
  if (code < 0 || code > static_cast<int>(grpc::StatusCode::UNAUTHENTICATED)) {
    return grpc::Status(grpc::StatusCode::UNKNOWN, std::string(status.message()));
  }
  return grpc::Status(static_cast<grpc::StatusCode>(code), std::string(status.message()));
}

std::string StatusCodeName(const absl::Status& status) {
  return absl::StatusCodeToString(status.code());
}

}  // namespace flashtick
