// SecurityServerTest: the shared fixture of the TLS and token tests: a temp
// dir with an empty model repository, an experiment store and the openssl-made
// certificates (TestCerts, made once per test binary), StartServer(options)
// for an in-process flashtickd on 127.0.0.1:0, and typed calls through the
// flashtick CLI's own MakeChannel (so the client flags are exercised too).
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "client/client_options.h"
#include "server/flashtick_server.h"
#include "tests/security/test_certs.h"

namespace flashtick {

class SecurityServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  void SetUp() override;
  void TearDown() override;

  // Plaintext, no tokens, experiments on; tests add the security flags.
  ServerOptions BaseOptions() const;
  void StartServer(const ServerOptions& options);
  std::string Address() const { return "127.0.0.1:" + std::to_string(server_->grpc_port()); }
  ClientOptions Client() const;  // plaintext, no token, 10 s deadline
  // A file holding `text` under the test's root.
  std::string WriteFile(const std::string& name, const std::string& text) const;

  // One call per protected area, through MakeChannel(client).
  grpc::Status CallListExperiments(const ClientOptions& client);
  grpc::Status CallServerLive(const ClientOptions& client);
  grpc::Status CallHealth(const ClientOptions& client);

  static TestCerts* certs_;
  std::string root_;
  std::unique_ptr<FlashtickServer> server_;
};

}  // namespace flashtick
