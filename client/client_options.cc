// Channel construction and security flags for the flashtick CLI (see
// client_options.h). The bearer token rides on a channel interceptor, so every
// call of every subcommand carries it, over TLS or plaintext alike (gRPC's call
// credentials refuse plaintext channels).
#include "client/client_options.h"

#include <chrono>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <grpcpp/security/credentials.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/bearer_token_interceptor.h"
#include "common/status_macros.h"
#include "common/file_io.h"

namespace flashtick {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  ASSIGN_OR_RETURN(std::string pem, ReadFlagFile(flag, path));
  if (!absl::StrContains(pem, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " '", path, "' is not a PEM file (no '-----BEGIN ' line)"));
  }
  return pem;
}

// The first line that is neither blank nor a '#' comment (the server's format).
std::string FirstToken(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line.front() != '#') return std::string(line);
  }
  return "";
}

}  // namespace

void AddClientSecurityFlags(CLI::App* app, ClientOptions* o) {
  app->add_flag("--tls", o->tls, "use TLS with the system's root certificates");
  app->add_option("--tls-ca", o->tls_ca, "PEM CA that signed the server certificate (implies TLS)");
  app->add_option("--tls-cert", o->tls_cert,
                  "PEM client certificate for mutual TLS (with --tls-key)");
  app->add_option("--tls-key", o->tls_key, "PEM private key of --tls-cert");
  app->add_option("--tls-server-name", o->tls_server_name,
                  "name to verify in the server certificate (default: the --server host)");
  app->add_option("--token-file", o->token_file,
                  "file with the bearer token sent as 'authorization: Bearer <token>' "
                  "(default: $FLASHTICK_TOKEN)");
}

absl::Status LoadClientSecurity(ClientOptions* o) {
  if (o->tls_cert.empty() != o->tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together (mutual TLS)");
  }
  if (!o->tls_ca.empty()) {
    ASSIGN_OR_RETURN(o->tls_ca_pem, ReadPem("--tls-ca", o->tls_ca));
  }
  if (!o->tls_cert.empty()) {
    ASSIGN_OR_RETURN(o->tls_cert_pem, ReadPem("--tls-cert", o->tls_cert));
    ASSIGN_OR_RETURN(o->tls_key_pem, ReadPem("--tls-key", o->tls_key));
  }
  if (!o->token_file.empty()) {
    ASSIGN_OR_RETURN(std::string text, ReadFlagFile("--token-file", o->token_file));
    o->token = FirstToken(text);
    if (o->token.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token-file '", o->token_file, "' holds no token"));
    }
  } else if (const char* env = std::getenv("FLASHTICK_TOKEN"); env != nullptr) {
    o->token = std::string(absl::StripAsciiWhitespace(env));
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // unlimited: the server bounds what it sends
  args.SetMaxSendMessageSize(-1);     // the server answers RESOURCE_EXHAUSTED if too big
  if (options.private_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (options.UsesTls() || !options.tls_ca_pem.empty() || !options.tls_cert_pem.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_ca_pem;  // "": gRPC's default roots
    ssl.pem_private_key = options.tls_key_pem;
    ssl.pem_cert_chain = options.tls_cert_pem;
    creds = grpc::SslCredentials(ssl);
    if (!options.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(options.tls_server_name);
    }
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  if (options.token.empty()) return grpc::CreateCustomChannel(options.server, creds, args);
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      options.server, creds, args, MakeBearerTokenInterceptors(options.token));
}

void SetDeadline(const ClientOptions& options, grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(
                            options.timeout_seconds * 1000)));
}

}  // namespace flashtick
