// gRPC port credentials from the TLS and token flags (see server_security.h).
#include "server/auth/server_security.h"


#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/file_io.h"
#include "server/auth/plaintext_auth_credentials.h"
#include "server/auth/token_auth_processor.h"
#include "server/auth/token_set.h"
#include "server/logging.h"

namespace flashtick {

absl::StatusOr<std::string> ReadPemFile(absl::string_view flag, const std::string& path) {
  ASSIGN_OR_RETURN(std::string pem, ReadFlagFile(flag, path));
  if (!absl::StrContains(pem, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " '", path, "' is not a PEM file (no '-----BEGIN ' line)"));
  }
  return pem;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> BuildServerCredentials(
    const ServerOptions& options, std::shared_ptr<const TokenSet>* tokens_out) {
  if (tokens_out != nullptr) tokens_out->reset();
  std::shared_ptr<grpc::ServerCredentials> creds;
  if (options.tls_cert.empty()) {
    if (!options.auth_token_file.empty()) {
      creds = std::make_shared<PlaintextAuthCredentials>();
      LogWarning(
          "bearer tokens over plaintext gRPC: use --tls-cert/--tls-key unless a "
          "TLS-terminating proxy sits in front");
    } else {
      creds = grpc::InsecureServerCredentials();
    }
  } else {
    grpc::SslServerCredentialsOptions ssl;
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    ASSIGN_OR_RETURN(pair.cert_chain, ReadPemFile("--tls-cert", options.tls_cert));
    ASSIGN_OR_RETURN(pair.private_key, ReadPemFile("--tls-key", options.tls_key));
    ssl.pem_key_cert_pairs.push_back(std::move(pair));
    if (options.tls_client_ca.empty()) {
      ssl.client_certificate_request = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
      LogInfo(absl::StrCat("gRPC TLS with certificate ", options.tls_cert));
    } else {
      ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPemFile("--tls-client-ca", options.tls_client_ca));
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
      LogInfo(absl::StrCat("gRPC mutual TLS with certificate ", options.tls_cert,
                           "; clients need a certificate signed by ", options.tls_client_ca));
    }
    creds = grpc::SslServerCredentials(ssl);
  }
  if (!options.auth_token_file.empty()) {
    ASSIGN_OR_RETURN(TokenSet tokens, TokenSet::LoadFile(options.auth_token_file));
    // The count and the path only: tokens are never logged.
    LogInfo(absl::StrCat("bearer-token auth: ", tokens.size(), " token(s) from ",
                         options.auth_token_file, "; protected: flashtick.v1.Experiments",
                         options.auth_inference
                             ? ", inference.GRPCInferenceService, flashtick.v1.TickStream"
                             : " (inference and tick stream open; --auth-inference closes them)"));
    if (tokens_out != nullptr) *tokens_out = std::make_shared<const TokenSet>(tokens);
    creds->SetAuthMetadataProcessor(
        std::make_shared<TokenAuthProcessor>(std::move(tokens), options.auth_inference));
  }
  return creds;
}

}  // namespace flashtick
