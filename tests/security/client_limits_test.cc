// Per-client limits (docs/security.md) and the tick-stream limits (docs/serving.md) through an
// in-process flashtickd with two bearer tokens: streams per client (by token) and
// per server, the whole-day memory reservation, the idle timeout, a freed slot being
// reusable (server/stream/stream_admission.h); experiments queued or running per
// client (server/experiments/experiment_store.h). Unit tests:
// tests/stream/stream_admission_test.cc, tests/experiments/experiment_store_test.cc.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "client/client_options.h"
#include "flashtick/v1/experiments.grpc.pb.h"
#include "flashtick/v1/tick_stream.grpc.pb.h"
#include "kernels/backend.h"
#include "model/transformer.h"
#include "tests/security/security_fixture.h"

namespace flashtick {
namespace {

constexpr char kTokenA[] = "ft-limits-token-a-1234567890";
constexpr char kTokenB[] = "ft-limits-token-b-0987654321";

// One client stream: opens the session and keeps the call open until Close().
class OpenStream {
 public:
  OpenStream(const ClientOptions& client, const std::string& model,
             const std::string& instrument = "EURUSD") {
    stub_ = v1::TickStream::NewStub(MakeChannel(client));
    ctx_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    stream_ = stub_->StreamTicks(&ctx_);
    v1::TickStreamRequest open;
    open.mutable_open()->set_model_name(model);
    open.mutable_open()->set_instrument(instrument);
    open.mutable_open()->set_date("2026-12-01");
    stream_->Write(open);
    v1::TickStreamResponse response;
    if (stream_->Read(&response) && response.has_opened()) {
      opened_ = response.opened();
    } else {
      status_ = stream_->Finish();  // refused: the server ended the call
      finished_ = true;
    }
  }
  ~OpenStream() { Close(); }

  bool ok() const { return !finished_; }
  const grpc::Status& status() const { return status_; }
  const v1::SessionOpened& opened() const { return opened_; }

  // One tick; false when the server has ended the stream.
  bool Tick(int64_t step) {
    v1::TickStreamRequest r;
    r.mutable_tick()->set_step(step);
    r.mutable_tick()->set_bid(100.0);
    r.mutable_tick()->set_ask(100.02);
    r.mutable_tick()->set_flow(1.0);
    v1::TickStreamResponse response;
    return stream_->Write(r) && stream_->Read(&response);
  }
  // Waits for the server to end the stream (e.g. idle) and returns its status.
  grpc::Status WaitForEnd() {
    v1::TickStreamResponse response;
    while (stream_->Read(&response)) {
    }
    status_ = stream_->Finish();
    finished_ = true;
    return status_;
  }
  void Close() {
    if (finished_) return;
    stream_->WritesDone();
    WaitForEnd();
  }

 private:
  std::unique_ptr<v1::TickStream::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::TickStreamRequest, v1::TickStreamResponse>> stream_;
  v1::SessionOpened opened_;
  grpc::Status status_;
  bool finished_ = false;
};

class StreamLimitsTest : public SecurityServerTest {
 protected:
  // A tiny model (C = 32, 2 layers, 2 KV heads of D = 8) in the test's repository.
  void SetUp() override {
    SecurityServerTest::SetUp();
    auto backend = CreateBackend("cpu", {.threads = 1});
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(backend).value();
    ModelConfig config;
    config.width = 32;
    config.layers = 2;
    config.heads = 4;
    config.kv_heads = 2;
    config.max_context = 4096;
    auto model = Transformer::InitRandom(config, 3, backend_.get());
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE((*model)->Save(root_ + "/models/tiny/1").ok());
  }
  ServerOptions Options() {
    ServerOptions o = BaseOptions();
    o.max_seq_len = 4096;
    o.auth_token_file = WriteFile("tokens", std::string(kTokenA) + "\n" + kTokenB + "\n");
    o.auth_inference = true;  // streams are told apart by their token
    return o;
  }
  ClientOptions As(const std::string& token) const {
    ClientOptions c = Client();
    c.token = token;
    return c;
  }
  std::unique_ptr<Backend> backend_;
};

TEST_F(StreamLimitsTest, PerClientThenPerServerThenFreedSlot) {
  ServerOptions o = Options();
  o.max_streams = 3;
  o.max_streams_per_client = 2;
  StartServer(o);
  std::vector<std::unique_ptr<OpenStream>> a;
  for (int i = 0; i < 2; ++i) {
    a.push_back(std::make_unique<OpenStream>(As(kTokenA), "tiny"));
    ASSERT_TRUE(a.back()->ok()) << a.back()->status().error_message();
    EXPECT_EQ(a.back()->opened().client(), "token#1");
  }
  OpenStream third_a(As(kTokenA), "tiny");
  ASSERT_FALSE(third_a.ok());
  EXPECT_EQ(third_a.status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(third_a.status().error_message().find("--max-streams-per-client 2"), std::string::npos)
      << third_a.status().error_message();
  EXPECT_NE(third_a.status().error_message().find("token#1"), std::string::npos);

  OpenStream b(As(kTokenB), "tiny");  // another client still has room
  ASSERT_TRUE(b.ok()) << b.status().error_message();
  EXPECT_EQ(b.opened().client(), "token#2");
  EXPECT_TRUE(b.Tick(0));

  OpenStream fourth(As(kTokenB), "tiny");  // the server's three are taken
  ASSERT_FALSE(fourth.ok());
  EXPECT_EQ(fourth.status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(fourth.status().error_message().find("--max-streams 3"), std::string::npos)
      << fourth.status().error_message();

  a[0]->Close();
  EXPECT_TRUE(a[0]->status().ok()) << a[0]->status().error_message();
  // The slot frees when the server's reactor is done, just after the client's Finish.
  std::unique_ptr<OpenStream> again;
  for (int tries = 0; tries < 50; ++tries) {
    again = std::make_unique<OpenStream>(As(kTokenA), "tiny");
    if (again->ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(again->ok()) << again->status().error_message();
  EXPECT_TRUE(again->Tick(0));
}

TEST_F(StreamLimitsTest, WholeDayMemoryIsReservedAtOpen) {
  // A day of this model: 4,096 rows × 6 features × 4 B + 2 (K, V) × 2 layers × 4,096
  // rows × 2 KV heads × 8 × 4 B (fp32 on the CPU) + the decode workspace, 4 query heads
  // × 16 chunks of 256 keys × (m, l and 8 outputs) × 4 B = 98,304 + 1,048,576 + 2,560
  // = 1,149,440 B.
  constexpr int64_t kDay = 4096 * 6 * 4 + 2 * 2 * 4096 * 2 * 8 * 4 + 4 * 16 * (2 + 8) * 4;
  ServerOptions o = Options();
  o.stream_memory_mb = 3;  // two days fit (2.19 MiB), three (3.28 MiB) do not
  StartServer(o);
  OpenStream s1(As(kTokenA), "tiny"), s2(As(kTokenB), "tiny");
  ASSERT_TRUE(s1.ok()) << s1.status().error_message();
  ASSERT_TRUE(s2.ok()) << s2.status().error_message();
  EXPECT_EQ(s1.opened().state_mode(), "incremental");
  EXPECT_EQ(s1.opened().reserved_bytes(), kDay);
  OpenStream s3(As(kTokenA), "tiny");
  ASSERT_FALSE(s3.ok());
  EXPECT_EQ(s3.status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s3.status().error_message().find("--stream-memory-mb"), std::string::npos)
      << s3.status().error_message();
  // The refused stream held a slot only; the open ones still answer.
  EXPECT_TRUE(s1.Tick(0));
  EXPECT_TRUE(s2.Tick(0));
}

TEST_F(StreamLimitsTest, IdleStreamIsEndedActiveOneIsNot) {
  ServerOptions o = Options();
  o.stream_idle_timeout_seconds = 0.4;
  StartServer(o);
  OpenStream idle(As(kTokenA), "tiny"), active(As(kTokenB), "tiny");
  ASSERT_TRUE(idle.ok() && active.ok());
  EXPECT_DOUBLE_EQ(idle.opened().idle_timeout_seconds(), 0.4);
  const auto start = std::chrono::steady_clock::now();
  // The active stream ticks every 0.1 s for 1.2 s: three idle timeouts in all.
  for (int step = 0; step < 12; ++step) {
    ASSERT_TRUE(active.Tick(step)) << "an active stream was ended at step " << step;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const grpc::Status ended = idle.WaitForEnd();
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << ended.error_message();
  EXPECT_NE(ended.error_message().find("--stream-idle-timeout-seconds"), std::string::npos)
      << ended.error_message();
  EXPECT_LT(waited, 10.0);
  EXPECT_TRUE(active.Tick(12));
}

TEST_F(StreamLimitsTest, OpenStringsAreBounded) {
  // The session keeps them outside its memory reservation, and a refusal must not
  // echo a megabyte back in the status trailer.
  StartServer(Options());
  OpenStream long_instrument(As(kTokenA), "tiny", std::string(1 << 20, 'I'));
  ASSERT_FALSE(long_instrument.ok());
  EXPECT_EQ(long_instrument.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(long_instrument.status().error_message().find("open.instrument"), std::string::npos);
  EXPECT_LT(long_instrument.status().error_message().size(), 200u);
  OpenStream long_model(As(kTokenA), std::string(1 << 20, 'm'));
  ASSERT_FALSE(long_model.ok());
  EXPECT_EQ(long_model.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(long_model.status().error_message().size(), 200u);
  OpenStream fine(As(kTokenA), "tiny");
  EXPECT_TRUE(fine.ok()) << fine.status().error_message();
}

TEST_F(StreamLimitsTest, ExperimentsPerClient) {
  ServerOptions o = Options();
  o.max_experiments_per_client = 1;
  StartServer(o);
  auto submit = [&](const std::string& token, v1::Experiment* out) {
    auto stub = v1::Experiments::NewStub(MakeChannel(As(token)));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::SubmitSweepRequest req;
    req.set_preset("demo");  // minutes of training: still queued or running below
    v1::SubmitSweepResponse resp;
    grpc::Status s = stub->SubmitSweep(&ctx, req, &resp);
    *out = resp.experiment();
    return s;
  };
  v1::Experiment a1, a2, b1;
  grpc::Status first = submit(kTokenA, &a1);
  ASSERT_TRUE(first.ok()) << first.error_message();
  grpc::Status second = submit(kTokenA, &a2);
  EXPECT_EQ(second.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(second.error_message().find("--max-experiments-per-client 1"), std::string::npos)
      << second.error_message();
  EXPECT_NE(second.error_message().find("token#1"), std::string::npos);
  grpc::Status other = submit(kTokenB, &b1);
  EXPECT_TRUE(other.ok()) << "another client has its own place: " << other.error_message();
  // Stop the training before shutdown; each experiment by its owner (another
  // client's cancel is NOT_FOUND: experiments_limits_test).
  for (const auto& [id, token] : {std::pair<std::string, std::string>{a1.id(), kTokenA},
                                  {b1.id(), kTokenB}}) {
    auto stub = v1::Experiments::NewStub(MakeChannel(As(token)));
    grpc::ClientContext ctx;
    v1::CancelExperimentRequest req;
    req.set_id(id);
    v1::CancelExperimentResponse resp;
    EXPECT_TRUE(stub->CancelExperiment(&ctx, req, &resp).ok());
  }
}

}  // namespace
}  // namespace flashtick
