// TLS and mutual TLS on flashtickd's gRPC port, with openssl-made certificates:
// a client trusting the CA succeeds; a plaintext client, or one trusting another
// CA, fails; with --tls-client-ca a client without a certificate, or with one
// from another CA, fails, and one with a CA-signed certificate succeeds.
// Startup errors: a missing file names its flag and path; --tls-cert without
// --tls-key and --tls-client-ca without TLS are INVALID_ARGUMENT.
#include "tests/security/security_fixture.h"

namespace flashtick {
namespace {

class TlsTest : public SecurityServerTest {
 protected:
  ServerOptions TlsOptions() const {
    ServerOptions o = BaseOptions();
    o.tls_cert = certs_->server_pem;
    o.tls_key = certs_->server_key;
    return o;
  }
  ClientOptions TlsClient() const {
    ClientOptions c = Client();
    c.tls_ca = certs_->ca_pem;
    c.tls_server_name = "localhost";
    EXPECT_TRUE(LoadClientSecurity(&c).ok());
    return c;
  }
};

TEST_F(TlsTest, ClientTrustingTheCaSucceedsPlaintextFails) {
  StartServer(TlsOptions());
  ClientOptions tls = TlsClient();
  grpc::Status live = CallServerLive(tls);
  EXPECT_TRUE(live.ok()) << live.error_message();
  EXPECT_TRUE(CallHealth(tls).ok());

  ClientOptions plain = Client();
  plain.timeout_seconds = 3;
  grpc::Status s = CallServerLive(plain);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
}

TEST_F(TlsTest, ClientTrustingAnotherCaFails) {
  StartServer(TlsOptions());
  ClientOptions c = Client();
  c.tls_ca = certs_->dir + "/rogue_ca.pem";
  c.tls_server_name = "localhost";
  c.timeout_seconds = 3;
  ASSERT_TRUE(LoadClientSecurity(&c).ok());
  EXPECT_EQ(CallServerLive(c).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsRequiresACaSignedClientCertificate) {
  ServerOptions o = TlsOptions();
  o.tls_client_ca = certs_->ca_pem;
  StartServer(o);

  ClientOptions no_cert = TlsClient();
  no_cert.timeout_seconds = 3;
  EXPECT_EQ(CallServerLive(no_cert).error_code(), grpc::StatusCode::UNAVAILABLE);

  ClientOptions rogue = TlsClient();
  rogue.timeout_seconds = 3;
  rogue.tls_cert = certs_->rogue_client_pem;
  rogue.tls_key = certs_->rogue_client_key;
  ASSERT_TRUE(LoadClientSecurity(&rogue).ok());
  EXPECT_EQ(CallServerLive(rogue).error_code(), grpc::StatusCode::UNAVAILABLE);

  ClientOptions good = TlsClient();
  good.tls_cert = certs_->client_pem;
  good.tls_key = certs_->client_key;
  ASSERT_TRUE(LoadClientSecurity(&good).ok());
  grpc::Status s = CallServerLive(good);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(CallListExperiments(good).ok());  // no tokens configured: open
}

TEST_F(TlsTest, StartupErrorsNameTheFlagAndPath) {
  ServerOptions missing = TlsOptions();
  missing.tls_cert = root_ + "/nope.pem";
  auto s = FlashtickServer::Start(missing);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("--tls-cert"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find(missing.tls_cert), std::string::npos) << s.status();

  ServerOptions not_pem = TlsOptions();
  not_pem.tls_client_ca = WriteFile("ca.txt", "not a certificate\n");
  s = FlashtickServer::Start(not_pem);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_NE(s.status().message().find("--tls-client-ca"), std::string::npos) << s.status();

  ServerOptions half = BaseOptions();
  half.tls_cert = certs_->server_pem;
  EXPECT_EQ(FlashtickServer::Start(half).status().code(), absl::StatusCode::kInvalidArgument);

  ServerOptions ca_only = BaseOptions();
  ca_only.tls_client_ca = certs_->ca_pem;
  EXPECT_EQ(FlashtickServer::Start(ca_only).status().code(), absl::StatusCode::kInvalidArgument);

  ClientOptions client = Client();
  client.tls_ca = root_ + "/nope-ca.pem";
  absl::Status c = LoadClientSecurity(&client);
  EXPECT_EQ(c.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(c.message().find("--tls-ca"), std::string::npos) << c;
}

}  // namespace
}  // namespace flashtick
