// ClientOptions: what every `flashtick` subcommand shares (server address,
// per-call deadline, TLS and bearer token), and the channel they open. The
// channel lifts gRPC's 4 MiB receive cap so a full day of probabilities
// ([1, 23,400, 3] FP32 ≈ 0.28 MB per row, more with batches) always comes back;
// the server enforces its own limit. TLS and token files are read once by
// LoadClientSecurity() so a bad path is an error before any call.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"

namespace CLI {
class App;
}

namespace flashtick {

struct ClientOptions {
  std::string server = "localhost:8001";
  // A full day on a few CPU cores takes minutes; on a GPU, milliseconds.
  double timeout_seconds = 600;
  // Security (docs/security.md). TLS when `tls` is set or any TLS file is given.
  bool tls = false;              // TLS with the system roots (or tls_ca)
  std::string tls_ca;            // PEM roots that sign the server's certificate
  std::string tls_cert;          // PEM client certificate (mutual TLS)
  std::string tls_key;           // PEM key of tls_cert
  std::string tls_server_name;   // name checked against the server certificate
  std::string token_file;        // bearer token (first non-comment line)
  // Filled by LoadClientSecurity() (or set directly by tests and embedders).
  std::string tls_ca_pem, tls_cert_pem, tls_key_pem;
  std::string token;             // secret: never printed
  // The channel gets a connection of its own instead of sharing one with the other
  // channels of this process to the same server (gRPC's global subchannel pool): a load
  // generator's clients then look like separate processes.
  bool private_connection = false;

  bool UsesTls() const { return tls || !tls_ca.empty() || !tls_cert.empty(); }
};

// Registers --tls, --tls-ca, --tls-cert, --tls-key, --tls-server-name and
// --token-file on `app`.
void AddClientSecurityFlags(CLI::App* app, ClientOptions* options);

// Reads the PEM files and the token (--token-file, else $FLASHTICK_TOKEN).
// NOT_FOUND / PERMISSION_DENIED / INVALID_ARGUMENT naming the flag and path.
absl::Status LoadClientSecurity(ClientOptions* options);

std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& options);
// Sets the per-call deadline from options.timeout_seconds.
void SetDeadline(const ClientOptions& options, grpc::ClientContext* context);

}  // namespace flashtick
