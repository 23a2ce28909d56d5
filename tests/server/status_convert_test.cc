// absl::Status -> grpc::Status: every canonical code maps to the same gRPC code
// with the message kept; OK stays OK; out-of-range codes become UNKNOWN. Also
// the metric label names.
#include "server/status_convert.h"

#include <gtest/gtest.h>

namespace flashtick {
namespace {

TEST(StatusConvert, OkIsOk) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(StatusCodeName(absl::OkStatus()), "OK");
}

TEST(StatusConvert, EveryCanonicalCodeKeepsCodeAndMessage) {
  const std::pair<absl::StatusCode, grpc::StatusCode> pairs[] = {
      {absl::StatusCode::kCancelled, grpc::StatusCode::CANCELLED},
      {absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN},
      {absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
      {absl::StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
      {absl::StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
      {absl::StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
      {absl::StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
      {absl::StatusCode::kAborted, grpc::StatusCode::ABORTED},
      {absl::StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
      {absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
      {absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL},
      {absl::StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
      {absl::StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS},
      {absl::StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
  };
  for (const auto& [absl_code, grpc_code] : pairs) {
    const grpc::Status status = ToGrpcStatus(absl::Status(absl_code, "what to fix"));
    EXPECT_EQ(status.error_code(), grpc_code) << absl::StatusCodeToString(absl_code);
    EXPECT_EQ(status.error_message(), "what to fix");
  }
  EXPECT_EQ(StatusCodeName(absl::ResourceExhaustedError("x")), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(StatusCodeName(absl::InvalidArgumentError("x")), "INVALID_ARGUMENT");
}

TEST(StatusConvert, LongMessagesAreCutToFitATrailer) {
  // A 1 MiB model name quoted in "unknown model '...'" overflowed the trailer.
  const std::string name(1 << 20, 'm');
  const grpc::Status s = ToGrpcStatus(absl::NotFoundError("unknown model '" + name + "'"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LE(s.error_message().size(), kMaxStatusMessageBytes + 32);
  EXPECT_NE(s.error_message().find("bytes)"), std::string::npos);
  // Never inside a UTF-8 sequence: "é" is two bytes.
  std::string accents;
  while (accents.size() < 3000) accents += "\xc3\xa9";
  const grpc::Status u = ToGrpcStatus(absl::InvalidArgumentError("x" + accents));
  const std::string kept = u.error_message().substr(0, u.error_message().find("..."));
  EXPECT_EQ((kept.size() - 1) % 2, 0u);
}

TEST(StatusConvert, NonCanonicalCodeBecomesUnknown) {
  const grpc::Status status = ToGrpcStatus(absl::Status(static_cast<absl::StatusCode>(42), "odd"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(status.error_message(), "odd");
}

}  // namespace
}  // namespace flashtick
