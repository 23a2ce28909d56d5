// BuildServerCredentials: the gRPC port's credentials from flashtickd's flags.
//   no --tls-cert/--tls-key      → plaintext (the default)
//   --tls-cert + --tls-key       → TLS (grpc::SslServerCredentials)
//   + --tls-client-ca            → mutual TLS: a client certificate signed by that
//                                  CA is required and verified
//   --auth-token-file            → a TokenAuthProcessor on either of the above
// Each file is read here, at startup, so a missing or unreadable one is a
// Status naming the flag and the path instead of a failed handshake later.
#pragma once

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/auth/token_set.h"
#include "server/server_options.h"

namespace flashtick {

// tokens (may be null) receives the accepted bearer tokens, or null without
// --auth-token-file, for naming clients (server/client_identity.h).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> BuildServerCredentials(
    const ServerOptions& options, std::shared_ptr<const TokenSet>* tokens = nullptr);

// The whole file; NOT_FOUND / PERMISSION_DENIED naming `flag` and `path`, and
// INVALID_ARGUMENT when it is not PEM (no "-----BEGIN ").
absl::StatusOr<std::string> ReadPemFile(absl::string_view flag, const std::string& path);

}  // namespace flashtick
