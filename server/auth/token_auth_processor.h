// TokenAuthProcessor: flashtickd's bearer-token check, run by gRPC core on every
// call before any handler (a grpc::AuthMetadataProcessor, so it works with the
// callback services as they are registered: nothing per service changes). It
// reads the call's ":path", decides with ProtectedMethod() whether the method
// needs a token, and then wants `authorization: Bearer <token>`:
//   missing → UNAUTHENTICATED naming the header to send;
//   wrong   → UNAUTHENTICATED (TokenSet::Matches, constant time).
// Health and reflection are always open. The accepted header stays on the call so
// the per-client limits can tell clients apart by token (server/client_identity.h);
// rejections log the method, never the token.
#pragma once

#include <grpcpp/security/auth_metadata_processor.h>

#include <string>

#include "absl/strings/string_view.h"
#include "server/auth/token_set.h"

namespace flashtick {

// Whether a full method path ("/package.Service/Method") needs a token:
// flashtick.v1.Experiments and model control (RepositoryModelLoad / Unload)
// always; the rest of inference.GRPCInferenceService and
// flashtick.v1.TickStream only when `auth_inference`; anything else (health,
// reflection) never.
bool ProtectedMethod(absl::string_view path, bool auth_inference);

class TokenAuthProcessor : public grpc::AuthMetadataProcessor {
 public:
  TokenAuthProcessor(TokenSet tokens, bool auth_inference)
      : tokens_(std::move(tokens)), auth_inference_(auth_inference) {}

  // Runs inline on gRPC's thread: the check is a few hundred byte compares.
  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  const TokenSet tokens_;
  const bool auth_inference_;
};

}  // namespace flashtick
