// The security tests' fixture (see security_fixture.h).
#include "tests/security/security_fixture.h"

#include <unistd.h>

#include <chrono>

#include "flashtick/v1/experiments.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "inference/grpc_service.grpc.pb.h"

namespace flashtick {

TestCerts* SecurityServerTest::certs_ = nullptr;

void SecurityServerTest::SetUpTestSuite() {
  if (certs_ != nullptr) return;
  auto certs =
      TestCerts::Make(::testing::TempDir() + "/security_certs_" + std::to_string(getpid()));
  ASSERT_TRUE(certs.ok()) << certs.status();
  certs_ = new TestCerts(std::move(*certs));
}

void SecurityServerTest::SetUp() {
  ASSERT_NE(certs_, nullptr) << "certificates could not be made (see SetUpTestSuite)";
  InProcessServerTest::SetUp();
}

ServerOptions SecurityServerTest::BaseOptions() const {
  ServerOptions o = InProcessServerTest::BaseOptions();
  o.shutdown_grace_seconds = 0;
  return o;
}

ClientOptions SecurityServerTest::Client() const {
  ClientOptions c;
  c.server = server_ ? Address() : "127.0.0.1:1";  // no server: only file checks
  c.timeout_seconds = 10;
  return c;
}

grpc::Status SecurityServerTest::CallListExperiments(const ClientOptions& client) {
  auto stub = v1::Experiments::NewStub(MakeChannel(client));
  grpc::ClientContext ctx;
  SetDeadline(client, &ctx);
  v1::ListExperimentsRequest req;
  v1::ListExperimentsResponse resp;
  return stub->ListExperiments(&ctx, req, &resp);
}

grpc::Status SecurityServerTest::CallServerLive(const ClientOptions& client) {
  auto stub = inference::GRPCInferenceService::NewStub(MakeChannel(client));
  grpc::ClientContext ctx;
  SetDeadline(client, &ctx);
  inference::ServerLiveRequest req;
  inference::ServerLiveResponse resp;
  grpc::Status status = stub->ServerLive(&ctx, req, &resp);
  if (status.ok() && !resp.live()) return grpc::Status(grpc::StatusCode::INTERNAL, "not live");
  return status;
}

grpc::Status SecurityServerTest::CallHealth(const ClientOptions& client) {
  auto stub = grpc::health::v1::Health::NewStub(MakeChannel(client));
  grpc::ClientContext ctx;
  SetDeadline(client, &ctx);
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  return stub->Check(&ctx, req, &resp);
}

}  // namespace flashtick
