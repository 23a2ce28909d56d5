// SecurityServerTest: the fixture of the TLS, token and stream-limit tests: the
// in-process flashtickd of InProcessServerTest (tests/support/in_process_server.h:
// a temp dir with an empty model repository and an experiment store,
// StartServer(options) on 127.0.0.1:0), the openssl-made certificates (TestCerts,
// made once per test binary), and typed calls through the flashtick CLI's own
// MakeChannel (so the client flags are exercised too).
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

#include "client/client_options.h"
#include "tests/security/test_certs.h"
#include "tests/support/in_process_server.h"

namespace flashtick {

class SecurityServerTest : public InProcessServerTest {
 protected:
  static void SetUpTestSuite();
  void SetUp() override;

  // InProcessServerTest's, with no drain time; tests add the security flags.
  ServerOptions BaseOptions() const;
  ClientOptions Client() const;  // plaintext, no token, 10 s deadline

  // One call per protected area, through MakeChannel(client).
  grpc::Status CallListExperiments(const ClientOptions& client);
  grpc::Status CallServerLive(const ClientOptions& client);
  grpc::Status CallHealth(const ClientOptions& client);

  static TestCerts* certs_;
};

}  // namespace flashtick
