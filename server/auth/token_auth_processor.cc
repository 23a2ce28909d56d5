// Bearer-token check on every call (see token_auth_processor.h).
#include "server/auth/token_auth_processor.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/logging.h"

namespace flashtick {
namespace {


// Services whose every method needs a token once --auth-token-file is set.
constexpr absl::string_view kAlwaysProtected[] = {"/flashtick.v1.Experiments/"};
// Methods that change what the server serves (model control): a token whenever
// tokens are on, like Experiments, although the rest of their service may be open.
constexpr absl::string_view kAlwaysProtectedMethods[] = {
    "/inference.GRPCInferenceService/RepositoryModelLoad",
    "/inference.GRPCInferenceService/RepositoryModelUnload"};
// Services that need one only with --auth-inference.
constexpr absl::string_view kInferenceServices[] = {"/inference.GRPCInferenceService/",
                                                    "/flashtick.v1.TickStream/"};

absl::string_view ToView(grpc::string_ref s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

bool ProtectedMethod(absl::string_view path, bool auth_inference) {
  for (absl::string_view prefix : kAlwaysProtected) {
    if (absl::StartsWith(path, prefix)) return true;
  }
  for (absl::string_view method : kAlwaysProtectedMethods) {
    if (path == method) return true;
  }
  if (auth_inference) {
    for (absl::string_view prefix : kInferenceServices) {
      if (absl::StartsWith(path, prefix)) return true;
    }
  }
  return false;
}

grpc::Status TokenAuthProcessor::Process(const InputMetadata& auth_metadata,
                                         grpc::AuthContext* /*context*/,
                                         OutputMetadata* /*consumed_auth_metadata*/,
                                         OutputMetadata* /*response_metadata*/) {
  const auto path_it = auth_metadata.find(":path");
  // gRPC core always passes the method path; without it the method is unknown,
  // so the call is refused rather than guessed open.
  if (path_it == auth_metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "flashtickd cannot tell which method was called; refusing it");
  }
  const std::string path(ToView(path_it->second));
  if (!ProtectedMethod(path, auth_inference_)) return grpc::Status::OK;

  const auto header = auth_metadata.find(std::string(kAuthorizationHeader));
  if (header == auth_metadata.end()) {
    LogWarning(absl::StrCat("rejected ", path, ": no authorization header"));
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        absl::StrCat(path,
                     " needs a token: send metadata 'authorization: Bearer <token>' "
                     "(flashtick: --token-file FILE or FLASHTICK_TOKEN)"));
  }
  const std::optional<absl::string_view> token = BearerToken(ToView(header->second));
  if (!token.has_value()) {
    LogWarning(absl::StrCat("rejected ", path, ": authorization header is not 'Bearer <token>'"));
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the authorization header must be 'Bearer <token>'");
  }
  if (!tokens_.Matches(*token)) {
    LogWarning(absl::StrCat("rejected ", path, ": bearer token not accepted"));
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the bearer token is not accepted by this server");
  }
  // Not consumed: the per-client limits name the caller by which token it presented
  // (server/client_identity.h, "token#N"; the processor cannot attach that to the
  // call, as gRPC hands it the connection's context, shared by calls with different
  // tokens). Handlers only match it; nothing logs metadata.
  return grpc::Status::OK;
}

}  // namespace flashtick
