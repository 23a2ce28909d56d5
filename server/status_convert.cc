// absl::Status -> grpc::Status. Both enumerate the canonical codes of
// google.rpc.Code with the same numbers (OK=0 ... UNAUTHENTICATED=16); the
// static_asserts pin that so a library change cannot silently remap codes.
#include "server/status_convert.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace flashtick {
namespace {

static_assert(static_cast<int>(absl::StatusCode::kInvalidArgument) ==
              static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
static_assert(static_cast<int>(absl::StatusCode::kResourceExhausted) ==
              static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED));
static_assert(static_cast<int>(absl::StatusCode::kUnauthenticated) ==
              static_cast<int>(grpc::StatusCode::UNAUTHENTICATED));

// Messages quote client strings (model names, ids, paths); the status travels in
// an HTTP/2 trailer (8 KiB by default), and a megabyte-long model name quoted
// whole broke it. Cut at a UTF-8 boundary, with the original length noted.
std::string Bounded(absl::string_view message) {
  if (message.size() <= kMaxStatusMessageBytes) return std::string(message);
  size_t cut = kMaxStatusMessageBytes;
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(message.substr(0, cut), "... (", message.size(), " bytes)");
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  int code = static_cast<int>(status.code());
  // Codes outside the canonical range (absl allows any int) have no gRPC twin.
  if (code < 0 || code > static_cast<int>(grpc::StatusCode::UNAUTHENTICATED)) {
    return grpc::Status(grpc::StatusCode::UNKNOWN, Bounded(status.message()));
  }
  return grpc::Status(static_cast<grpc::StatusCode>(code), Bounded(status.message()));
}

std::string StatusCodeName(const absl::Status& status) {
  return absl::StatusCodeToString(status.code());
}

}  // namespace flashtick
