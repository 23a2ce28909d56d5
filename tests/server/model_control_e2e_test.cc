// Model control end to end, on an in-process flashtickd over real gRPC:
// RepositoryModelUnload makes ModelInfer answer NOT_FOUND and drops the model from
// RepositoryIndex; RepositoryModelLoad brings it back; bad names, missing models
// and a second unload answer INVALID_ARGUMENT / NOT_FOUND; and a tick stream opened
// before the unload keeps predicting on its version until it closes. The server runs
// with --warm-up, so each load warms the version first. Every step waits for its
// answer, so nothing depends on timing.
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "common/random_ticks.h"
#include "flashtick/v1/tick_stream.grpc.pb.h"
#include "inference/grpc_service.grpc.pb.h"
#include "kernels/backend.h"
#include "model/transformer.h"
#include "tests/support/in_process_server.h"

namespace flashtick {
namespace {

constexpr char kModel[] = "tiny";

class ModelControlE2eTest : public InProcessServerTest {
 protected:
  void SetUp() override {
    InProcessServerTest::SetUp();
    auto backend = CreateBackend("cpu");
    ASSERT_TRUE(backend.ok()) << backend.status();
    ModelConfig config;
    config.name = kModel;
    config.width = 16;
    config.heads = 2;
    config.kv_heads = 2;
    config.layers = 1;
    config.max_context = 64;
    auto model = Transformer::InitRandom(config, 5, backend->get());
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE((*model)->Save(root_ + "/models/" + kModel + "/1").ok());
    features_ = config.features;
    ServerOptions o = BaseOptions();
    o.experiment_dir = "";  // inference only
    // With --warm-up, every load below also warms the version before it serves
    // (ModelRepository::set_prepare), so these tests cover that path too.
    o.pad_length_to = 16;
    o.warm_up = true;
    ASSERT_NO_FATAL_FAILURE(StartServer(o));
    stub_ = inference::GRPCInferenceService::NewStub(Channel());
  }

  grpc::Status Infer() {
    inference::ModelInferRequest request;
    request.set_model_name(kModel);
    auto* input = request.add_inputs();
    input->set_name("ticks");
    input->set_datatype("FP32");
    for (int64_t dim : {int64_t{1}, int64_t{4}, int64_t{features_}}) input->add_shape(dim);
    const std::vector<float> ticks = RandomTicks(4 * features_, 9);
    request.add_raw_input_contents()->assign(reinterpret_cast<const char*>(ticks.data()),
                                             ticks.size() * sizeof(float));
    inference::ModelInferResponse response;
    grpc::ClientContext ctx;
    return stub_->ModelInfer(&ctx, request, &response);
  }
  grpc::Status Load(const std::string& name) {
    inference::RepositoryModelLoadRequest request;
    request.set_model_name(name);
    inference::RepositoryModelLoadResponse response;
    grpc::ClientContext ctx;
    return stub_->RepositoryModelLoad(&ctx, request, &response);
  }
  grpc::Status Unload(const std::string& name) {
    inference::RepositoryModelUnloadRequest request;
    request.set_model_name(name);
    inference::RepositoryModelUnloadResponse response;
    grpc::ClientContext ctx;
    return stub_->RepositoryModelUnload(&ctx, request, &response);
  }
  // name/version:state of every index entry.
  std::vector<std::string> Index() {
    inference::RepositoryIndexResponse response;
    grpc::ClientContext ctx;
    const grpc::Status status = stub_->RepositoryIndex(&ctx, {}, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<std::string> out;
    for (const auto& m : response.models()) out.push_back(m.name() + "/" + m.version() + ":" + m.state());
    return out;
  }
  bool Ready() {
    inference::ModelReadyRequest request;
    request.set_name(kModel);
    inference::ModelReadyResponse response;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->ModelReady(&ctx, request, &response).ok());
    return response.ready();
  }

  int features_ = 0;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

TEST_F(ModelControlE2eTest, UnloadThenLoadAgain) {
  ASSERT_TRUE(Infer().ok());
  EXPECT_EQ(Index(), (std::vector<std::string>{"tiny/1:READY"}));

  grpc::Status unloaded = Unload(kModel);
  ASSERT_TRUE(unloaded.ok()) << unloaded.error_message();
  EXPECT_EQ(Infer().error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_FALSE(Ready());
  EXPECT_TRUE(Index().empty());
  EXPECT_EQ(Unload(kModel).error_code(), grpc::StatusCode::NOT_FOUND);

  grpc::Status loaded = Load(kModel);
  ASSERT_TRUE(loaded.ok()) << loaded.error_message();
  grpc::Status served = Infer();
  EXPECT_TRUE(served.ok()) << served.error_message();
  EXPECT_TRUE(Ready());
  EXPECT_EQ(Index(), (std::vector<std::string>{"tiny/1:READY"}));
  // Loading a loaded model reloads it (Triton): still served.
  ASSERT_TRUE(Load(kModel).ok());
  EXPECT_TRUE(Infer().ok());
}

TEST_F(ModelControlE2eTest, BadAndMissingNames) {
  EXPECT_EQ(Load("../models").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Load("/etc").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Load("").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Load("nope").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Unload("nope").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(Infer().ok());  // nothing served changed
}

// A stream opened before the unload keeps its version until it closes; a new
// stream for the unloaded model is refused with NOT_FOUND.
TEST_F(ModelControlE2eTest, OpenStreamKeepsItsVersionAcrossUnload) {
  auto stream_stub = v1::TickStream::NewStub(Channel());
  auto open = [&](grpc::ClientContext* ctx) {
    auto stream = stream_stub->StreamTicks(ctx);
    v1::TickStreamRequest request;
    request.mutable_open()->set_model_name(kModel);
    request.mutable_open()->set_instrument("TEST");
    request.mutable_open()->set_date("2026-01-02");
    EXPECT_TRUE(stream->Write(request));
    return stream;
  };
  auto send_row = [&](auto& stream, int64_t step) {
    v1::TickStreamRequest request;
    request.mutable_features()->set_step(step);
    for (float v : RandomTicks(features_, 20 + step)) request.mutable_features()->add_values(v);
    return stream->Write(request);
  };
  grpc::ClientContext ctx;
  auto stream = open(&ctx);
  v1::TickStreamResponse response;
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_TRUE(response.has_opened()) << response.DebugString();
  ASSERT_TRUE(send_row(stream, 0));
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_TRUE(response.has_prediction());

  ASSERT_TRUE(Unload(kModel).ok());
  ASSERT_TRUE(send_row(stream, 1));  // the open stream still predicts
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_TRUE(response.has_prediction());
  EXPECT_EQ(response.prediction().step(), 1);
  stream->WritesDone();
  while (stream->Read(&response)) {
  }
  grpc::Status closed = stream->Finish();
  EXPECT_TRUE(closed.ok()) << closed.error_message();

  grpc::ClientContext ctx2;
  auto refused = open(&ctx2);
  refused->WritesDone();
  while (refused->Read(&response)) {
  }
  EXPECT_EQ(refused->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace flashtick
