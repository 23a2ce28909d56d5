// Abandoned work on a running flashtickd: a ModelInfer of ONE long row (no row
// split can shorten it) whose client's deadline passes mid-forward must give the
// worker back at the next layer, not hold it to the end of the forward
// (server/inference/batched_predict.h, Transformer::Predict's `stop`).
//
// Not timing-fragile by construction: the full forward's time is measured on the
// same server first (its length doubled until it takes ≥ 0.8 s; then once more,
// warm), the deadline is a fifth of it, and a tiny request sent once that deadline
// has passed must be answered within 0.6 of the full forward: the model has 8
// layers, so the forward stops about an eighth of its time after the deadline
// (≈ 0.33 in all), while a forward that runs to its end answers it after ≈ 1.0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "common/random_ticks.h"
#include "inference/grpc_service.grpc.pb.h"
#include "kernels/backend.h"
#include "model/transformer.h"
#include "tests/support/in_process_server.h"

namespace flashtick {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kLayers = 8;
constexpr int64_t kMaxContext = 16384;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

class AbandonedWorkTest : public InProcessServerTest {
 protected:
  void SetUp() override {
    InProcessServerTest::SetUp();
    auto backend = CreateBackend("cpu");
    ASSERT_TRUE(backend.ok()) << backend.status();
    ModelConfig config;
    config.name = "slow";
    config.width = 32;
    config.heads = 4;
    config.kv_heads = 4;
    config.layers = kLayers;
    config.max_context = kMaxContext;
    auto model = Transformer::InitRandom(config, 3, backend->get());
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE((*model)->Save(root_ + "/models/slow/1").ok());
    features_ = config.features;

    ServerOptions o = BaseOptions();
    o.experiment_dir = "";  // inference only
    o.workers = 1;  // one worker: a held worker delays every other request
    o.max_seq_len = kMaxContext;
    o.batch_max_delay_us = 0;
    ASSERT_NO_FATAL_FAILURE(StartServer(o));
    stub_ = inference::GRPCInferenceService::NewStub(Channel());
  }

  inference::ModelInferRequest Request(int64_t steps) const {
    inference::ModelInferRequest request;
    request.set_model_name("slow");
    auto* input = request.add_inputs();
    input->set_name("ticks");
    input->set_datatype("FP32");
    input->add_shape(1);
    input->add_shape(steps);
    input->add_shape(features_);
    const std::vector<float> ticks = RandomTicks(steps * features_, 11);
    request.add_raw_input_contents()->assign(reinterpret_cast<const char*>(ticks.data()),
                                             ticks.size() * sizeof(float));
    (*request.mutable_parameters())["last_only"].set_bool_param(true);
    return request;
  }

  grpc::Status Infer(const inference::ModelInferRequest& request, double timeout_seconds) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
    inference::ModelInferResponse response;
    return stub_->ModelInfer(&context, request, &response);
  }

  int64_t features_ = 0;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

TEST_F(AbandonedWorkTest, ADeadlinePassingMidForwardReleasesTheWorker) {
  // The full forward of one row, long enough to measure (doubling the length).
  int64_t steps = 1024;
  double full = 0;
  inference::ModelInferRequest request;
  for (;;) {
    request = Request(steps);
    const auto start = Clock::now();
    const grpc::Status status = Infer(request, 120);
    full = Seconds(Clock::now() - start);
    ASSERT_TRUE(status.ok()) << status.error_message();
    if (full >= 0.8 || steps == kMaxContext) break;
    steps *= 2;
  }
  ASSERT_GE(full, 0.4) << "even " << steps << " steps forward too fast to test on this machine";
  {  // once more, warm (the first run at this length also grew the model's workspace)
    const auto start = Clock::now();
    ASSERT_TRUE(Infer(request, 120).ok());
    full = std::min(full, Seconds(Clock::now() - start));
  }

  // The same row with a deadline of a fifth of that: the client gives up mid-forward.
  const auto start = Clock::now();
  const grpc::Status abandoned = Infer(request, full / 5);
  EXPECT_EQ(abandoned.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << abandoned.error_message();
  // The next request gets the worker once the abandoned forward stops (at its next
  // layer), not when the whole forward would have ended.
  const grpc::Status next = Infer(Request(16), 120);
  const double waited = Seconds(Clock::now() - start);
  ASSERT_TRUE(next.ok()) << next.error_message();
  std::printf("one row of %lld steps: full forward %.3f s; deadline %.3f s; the next request "
              "answered after %.3f s\n",
              static_cast<long long>(steps), full, full / 5, waited);
  EXPECT_LT(waited, 0.6 * full) << "a " << steps << "-step forward of " << full
                                 << " s held the worker after its client left";
}

}  // namespace
}  // namespace flashtick
