// PlaintextAuthCredentials: plaintext (no TLS) server credentials that still run
// an AuthMetadataProcessor. gRPC 1.51's grpc::InsecureServerCredentials() aborts
// in SetAuthMetadataProcessor, but core's insecure credentials do run a processor
// set through the C API (grpc_server_credentials_set_auth_metadata_processor), so
// this class wraps grpc_insecure_server_credentials_create() and adapts the C++
// processor to the C callback. Used when --auth-token-file is given without TLS
// (e.g. behind a TLS-terminating proxy); the processor sees no AuthContext.
#pragma once

#include <grpc/grpc_security.h>
#include <grpcpp/security/auth_metadata_processor.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

namespace flashtick {

class PlaintextAuthCredentials : public grpc::ServerCredentials {
 public:
  PlaintextAuthCredentials();
  ~PlaintextAuthCredentials() override;
  PlaintextAuthCredentials(const PlaintextAuthCredentials&) = delete;
  PlaintextAuthCredentials& operator=(const PlaintextAuthCredentials&) = delete;

  // Before the server starts; the last call wins (as for SslServerCredentials).
  void SetAuthMetadataProcessor(
      const std::shared_ptr<grpc::AuthMetadataProcessor>& processor) override;

 private:
  int AddPortToServer(const std::string& addr, grpc_server* server) override;

  grpc_server_credentials* creds_;
};

}  // namespace flashtick
