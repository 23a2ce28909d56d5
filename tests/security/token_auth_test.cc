// Bearer tokens (--auth-token-file) on an in-process flashtickd: Experiments
// without a token → UNAUTHENTICATED naming the header, wrong token →
// UNAUTHENTICATED, right token → OK; inference open without --auth-inference and
// closed with it (KServe v2 and the TickStream stream), model control
// (RepositoryModelLoad / Unload) closed either way; health and reflection
// always open; the same over TLS; and the token string
// never appears in what the server writes to stderr (its log sink).
#include <cstdlib>

#include "flashtick/v1/tick_stream.grpc.pb.h"
#include "inference/grpc_service.grpc.pb.h"
#include "server/auth/token_auth_processor.h"
#include "tests/security/security_fixture.h"

namespace flashtick {
namespace {

constexpr char kToken[] = "ft-test-token-9f8e7d6c5b4a";
constexpr char kOtherToken[] = "ft-other-token-0123456789";

class TokenAuthTest : public SecurityServerTest {
 protected:
  ServerOptions TokenOptions() {
    ServerOptions o = BaseOptions();
    o.auth_token_file = WriteFile(
        "tokens", std::string("# flashtick tokens\n\n") + kOtherToken + "\n" + kToken + "\n");
    return o;
  }
  ClientOptions WithToken(const std::string& token) const {
    ClientOptions c = Client();
    c.token = token;
    return c;
  }
};

TEST_F(TokenAuthTest, ExperimentsNeedTheRightTokenInferenceStaysOpen) {
  ::testing::internal::CaptureStderr();
  StartServer(TokenOptions());

  grpc::Status missing = CallListExperiments(Client());
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::UNAUTHENTICATED) << missing.error_message();
  EXPECT_NE(missing.error_message().find("authorization: Bearer <token>"), std::string::npos)
      << missing.error_message();

  grpc::Status wrong = CallListExperiments(WithToken("ft-test-token-9f8e7d6c5b4b"));
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED) << wrong.error_message();
  EXPECT_EQ(CallListExperiments(WithToken("ft-test-token")).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);  // a prefix is not the token

  grpc::Status right = CallListExperiments(WithToken(kToken));
  EXPECT_TRUE(right.ok()) << right.error_message();
  EXPECT_TRUE(CallListExperiments(WithToken(kOtherToken)).ok());

  EXPECT_TRUE(CallServerLive(Client()).ok());  // inference open by default
  EXPECT_TRUE(CallHealth(Client()).ok());      // health always open
  server_->Shutdown();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("rejected /flashtick.v1.Experiments/ListExperiments"), std::string::npos)
      << log;
  EXPECT_EQ(log.find(kToken), std::string::npos) << "token leaked into the log";
  EXPECT_EQ(log.find(kOtherToken), std::string::npos) << "token leaked into the log";
  EXPECT_EQ(log.find("9f8e7d6c5b4"), std::string::npos) << "token fragment in the log";
}

// Opens StreamTicks, sends nothing, and returns the stream's final status.
grpc::Status EmptyTickStream(const ClientOptions& client) {
  auto stub = v1::TickStream::NewStub(MakeChannel(client));
  grpc::ClientContext ctx;
  SetDeadline(client, &ctx);
  auto stream = stub->StreamTicks(&ctx);
  stream->WritesDone();
  v1::TickStreamResponse response;
  while (stream->Read(&response)) {
  }
  return stream->Finish();
}

TEST(ProtectedMethodTest, ExperimentsAlwaysInferenceOnRequestHealthAndReflectionNever) {
  for (bool auth_inference : {false, true}) {
    EXPECT_TRUE(ProtectedMethod("/flashtick.v1.Experiments/SubmitSweep", auth_inference));
    EXPECT_TRUE(ProtectedMethod("/flashtick.v1.Experiments/WatchExperiment", auth_inference));
    EXPECT_TRUE(ProtectedMethod("/flashtick.v1.Experiments/PromoteArm", auth_inference));
    EXPECT_EQ(ProtectedMethod("/inference.GRPCInferenceService/ModelInfer", auth_inference),
              auth_inference);
    EXPECT_EQ(ProtectedMethod("/inference.GRPCInferenceService/RepositoryIndex", auth_inference),
              auth_inference);
    EXPECT_EQ(ProtectedMethod("/flashtick.v1.TickStream/StreamTicks", auth_inference),
              auth_inference);
    // Model control changes what is served: a token whenever tokens are on.
    EXPECT_TRUE(ProtectedMethod("/inference.GRPCInferenceService/RepositoryModelLoad",
                                auth_inference));
    EXPECT_TRUE(ProtectedMethod("/inference.GRPCInferenceService/RepositoryModelUnload",
                                auth_inference));
    EXPECT_FALSE(ProtectedMethod("/grpc.health.v1.Health/Check", auth_inference));
    EXPECT_FALSE(ProtectedMethod("/grpc.health.v1.Health/Watch", auth_inference));
    EXPECT_FALSE(ProtectedMethod(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", auth_inference));
    // A look-alike service name is not the Experiments service.
    EXPECT_FALSE(ProtectedMethod("/flashtick.v1.ExperimentsX/List", false));
  }
}

// RepositoryModelLoad / Unload with the given token; no such model exists, so a
// call that passes the token check answers NOT_FOUND.
grpc::Status CallModelControl(const ClientOptions& client, bool load) {
  auto stub = inference::GRPCInferenceService::NewStub(MakeChannel(client));
  grpc::ClientContext ctx;
  SetDeadline(client, &ctx);
  if (load) {
    inference::RepositoryModelLoadRequest req;
    req.set_model_name("no_such_model");
    inference::RepositoryModelLoadResponse resp;
    return stub->RepositoryModelLoad(&ctx, req, &resp);
  }
  inference::RepositoryModelUnloadRequest req;
  req.set_model_name("no_such_model");
  inference::RepositoryModelUnloadResponse resp;
  return stub->RepositoryModelUnload(&ctx, req, &resp);
}

TEST_F(TokenAuthTest, ModelControlNeedsATokenWhileInferenceIsOpen) {
  StartServer(TokenOptions());  // no --auth-inference
  EXPECT_TRUE(CallServerLive(Client()).ok());
  for (bool load : {true, false}) {
    grpc::Status missing = CallModelControl(Client(), load);
    EXPECT_EQ(missing.error_code(), grpc::StatusCode::UNAUTHENTICATED) << missing.error_message();
    EXPECT_EQ(CallModelControl(WithToken("ft-test-token"), load).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
    grpc::Status right = CallModelControl(WithToken(kToken), load);
    EXPECT_EQ(right.error_code(), grpc::StatusCode::NOT_FOUND) << right.error_message();
  }
}

TEST_F(TokenAuthTest, TickStreamOpenByDefault) {
  StartServer(TokenOptions());
  EXPECT_NE(EmptyTickStream(Client()).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(TokenAuthTest, AuthInferenceClosesInferenceButNotHealth) {
  ServerOptions o = TokenOptions();
  o.auth_inference = true;
  StartServer(o);
  grpc::Status closed = CallServerLive(Client());
  EXPECT_EQ(closed.error_code(), grpc::StatusCode::UNAUTHENTICATED) << closed.error_message();
  EXPECT_EQ(CallServerLive(WithToken(kOtherToken + std::string("x"))).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  grpc::Status open = CallServerLive(WithToken(kToken));
  EXPECT_TRUE(open.ok()) << open.error_message();
  EXPECT_TRUE(CallHealth(Client()).ok());
  grpc::Status stream = EmptyTickStream(Client());
  EXPECT_EQ(stream.error_code(), grpc::StatusCode::UNAUTHENTICATED) << stream.error_message();
  EXPECT_NE(EmptyTickStream(WithToken(kToken)).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(TokenAuthTest, TokensOverMutualTls) {
  ServerOptions o = TokenOptions();
  o.tls_cert = certs_->server_pem;
  o.tls_key = certs_->server_key;
  o.tls_client_ca = certs_->ca_pem;
  StartServer(o);
  ClientOptions c = Client();
  c.tls_ca = certs_->ca_pem;
  c.tls_cert = certs_->client_pem;
  c.tls_key = certs_->client_key;
  c.tls_server_name = "localhost";
  ASSERT_TRUE(LoadClientSecurity(&c).ok());
  EXPECT_EQ(CallListExperiments(c).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  c.token = kToken;
  grpc::Status s = CallListExperiments(c);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(CallServerLive(c).ok());
}

TEST_F(TokenAuthTest, ClientReadsTokenFileOrEnvironment) {
  ClientOptions from_file = Client();
  from_file.token_file = WriteFile("client_token", std::string("# mine\n  ") + kToken + "  \n");
  ASSERT_TRUE(LoadClientSecurity(&from_file).ok());
  EXPECT_EQ(from_file.token, kToken);

  setenv("FLASHTICK_TOKEN", kOtherToken, 1);
  ClientOptions from_env = Client();
  ASSERT_TRUE(LoadClientSecurity(&from_env).ok());
  unsetenv("FLASHTICK_TOKEN");
  EXPECT_EQ(from_env.token, kOtherToken);

  ServerOptions bad = TokenOptions();
  bad.auth_token_file = root_ + "/missing_tokens";
  auto s = FlashtickServer::Start(bad);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("--auth-token-file"), std::string::npos) << s.status();

  ServerOptions inference_only = BaseOptions();
  inference_only.auth_inference = true;  // without a token file
  EXPECT_EQ(FlashtickServer::Start(inference_only).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace flashtick
