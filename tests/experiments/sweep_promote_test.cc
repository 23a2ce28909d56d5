// Experiments.PromoteArm end to end, on an in-process flashtickd over real gRPC: a
// tiny CPU sweep runs to SUCCEEDED (the test waits on WatchExperiment's end, not on
// a clock), its winning arm is promoted to model version 1 of a new name, which
// RepositoryIndex lists and ModelInfer answers on; a second promotion (the other
// arm) becomes version 2 and "latest" serves it. Refusals: a bad model name
// (INVALID_ARGUMENT), an unknown experiment or arm (NOT_FOUND, the arms named), an
// experiment that has not finished (FAILED_PRECONDITION; held by a run_sweep seam
// until the test lets it go). And `flashtick sweep promote` (the CLI's library)
// prints the new version and maps the server's refusals to exit code 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "client/commands/sweep_command.h"
#include "common/random_ticks.h"
#include "flashtick/v1/experiments.grpc.pb.h"
#include "inference/grpc_service.grpc.pb.h"
#include "research/sweep/sweep_engine.h"
#include "tests/support/in_process_server.h"
#include "tests/support/sweep_cli.h"
#include "tests/support/tiny_sweep.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

// The tests' tiny sweep (tests/support/tiny_sweep.h).
std::string TinySweep(const std::string& name) { return TinySweepJson(name).dump(); }

// A sweep named "held" waits in run_sweep until release_ is set; others run for real.
class SweepPromoteTest : public InProcessServerTest {
 protected:
  void SetUp() override {
    InProcessServerTest::SetUp();
    std::shared_future<void> released = release_.get_future().share();
    FlashtickServer::ExperimentSeams seams;
    seams.run_sweep = [released](const SweepConfig& config, const SweepEngineOptions& options,
                                 const SweepHooks& hooks) -> absl::StatusOr<SweepOutcome> {
      if (config.name == "held") {
        released.wait();
        return absl::CancelledError("released by the test");
      }
      return SweepEngine::Run(config, options, hooks);
    };
    ASSERT_NO_FATAL_FAILURE(StartServer(BaseOptions(), seams));
    experiments_ = v1::Experiments::NewStub(Channel());
    inference_ = inference::GRPCInferenceService::NewStub(Channel());
  }
  void TearDown() override {
    Release();
    InProcessServerTest::TearDown();
  }
  void Release() {
    if (!released_) release_.set_value();
    released_ = true;
  }

  std::string Submit(const std::string& name) {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;
    req.set_config_json(TinySweep(name));
    v1::SubmitSweepResponse resp;
    const grpc::Status s = experiments_->SubmitSweep(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.experiment().id();
  }
  // Blocks until the experiment's progress stream ends (it ends with the experiment).
  v1::Experiment RunToEnd(const std::string& name) {
    const std::string id = Submit(name);
    grpc::ClientContext ctx;
    v1::WatchExperimentRequest wreq;
    wreq.set_id(id);
    auto reader = experiments_->WatchExperiment(&ctx, wreq);
    v1::ExperimentProgress e;
    while (reader->Read(&e)) {
    }
    EXPECT_TRUE(reader->Finish().ok());
    grpc::ClientContext gctx;
    v1::GetExperimentRequest greq;
    greq.set_id(id);
    v1::Experiment x;
    EXPECT_TRUE(experiments_->GetExperiment(&gctx, greq, &x).ok());
    return x;
  }
  grpc::Status Promote(const std::string& id, const std::string& model, const std::string& arm,
                       v1::PromoteArmResponse* out) {
    grpc::ClientContext ctx;
    v1::PromoteArmRequest req;
    req.set_experiment_id(id);
    req.set_model_name(model);
    req.set_arm_id(arm);
    return experiments_->PromoteArm(&ctx, req, out);
  }
  // The verdict's best N from the report (0 when tied at the top).
  int64_t BestContext(const std::string& id) {
    grpc::ClientContext ctx;
    v1::GetReportRequest req;
    req.set_id(id);
    v1::GetReportResponse report;
    EXPECT_TRUE(experiments_->GetReport(&ctx, req, &report).ok());
    const auto j = nlohmann::json::parse(report.content());
    const auto& best = j["verdict"]["best_context"];
    return best.is_number_integer() ? best.get<int64_t>() : 0;
  }
  // ModelInfer on `model` (version "" = latest); the version that answered.
  grpc::Status Infer(const std::string& model, const std::string& version, std::string* answered) {
    inference::ModelInferRequest request;
    request.set_model_name(model);
    request.set_model_version(version);
    auto* input = request.add_inputs();
    input->set_name("ticks");
    input->set_datatype("FP32");
    constexpr int64_t kSteps = 8, kFeatures = 6;
    for (int64_t dim : {int64_t{1}, kSteps, kFeatures}) input->add_shape(dim);
    const std::vector<float> ticks = RandomTicks(kSteps * kFeatures, 9);
    request.add_raw_input_contents()->assign(reinterpret_cast<const char*>(ticks.data()),
                                             ticks.size() * sizeof(float));
    inference::ModelInferResponse response;
    grpc::ClientContext ctx;
    const grpc::Status status = inference_->ModelInfer(&ctx, request, &response);
    *answered = response.model_version();
    return status;
  }
  std::vector<std::string> Index() {
    inference::RepositoryIndexResponse response;
    grpc::ClientContext ctx;
    const grpc::Status status = inference_->RepositoryIndex(&ctx, {}, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<std::string> out;
    for (const auto& m : response.models()) out.push_back(m.name() + "/" + m.version() + ":" + m.state());
    return out;
  }

  std::promise<void> release_;
  bool released_ = false;
  std::unique_ptr<v1::Experiments::Stub> experiments_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> inference_;
};

TEST_F(SweepPromoteTest, WinnerBecomesVersionOneAndTheNextPromotionVersionTwo) {
  const v1::Experiment x = RunToEnd("tiny");
  ASSERT_EQ(x.state(), v1::EXPERIMENT_STATE_SUCCEEDED) << x.error();
  const int64_t best = BestContext(x.id());
  ASSERT_GT(best, 0) << "this sweep's verdict has a single best N";
  const std::string winner = "n" + std::to_string(best);

  v1::PromoteArmResponse first;
  grpc::Status s = Promote(x.id(), "swept", "", &first);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(first.model_name(), "swept");
  EXPECT_EQ(first.version(), 1);
  EXPECT_EQ(first.arm_id(), winner);
  EXPECT_EQ(first.path(), root_ + "/models/swept/1");
  EXPECT_TRUE(fs::exists(first.path() + "/config.json"));
  EXPECT_TRUE(fs::exists(first.path() + "/model.safetensors"));
  {
    std::ifstream in(first.path() + "/config.json");
    const auto config = nlohmann::json::parse(in);
    EXPECT_EQ(config["max_context"], 32) << "the sweep's longest N, at least the arm's own";
  }
  EXPECT_EQ(Index(), (std::vector<std::string>{"swept/1:READY"}));
  std::string answered;
  s = Infer("swept", "1", &answered);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(answered, "1");

  const std::string other = winner == "n8" ? "n32" : "n8";
  v1::PromoteArmResponse second;
  s = Promote(x.id(), "swept", other, &second);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(second.version(), 2);
  EXPECT_EQ(second.arm_id(), other);
  EXPECT_EQ(Index(), (std::vector<std::string>{"swept/1:READY", "swept/2:READY"}));
  s = Infer("swept", "", &answered);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(answered, "2") << "latest serves the new version";
  s = Infer("swept", "1", &answered);
  EXPECT_TRUE(s.ok()) << s.error_message();
  // Only version directories are left in the model's directory (no temporary one).
  std::vector<std::string> leaves;
  for (const auto& e : fs::directory_iterator(root_ + "/models/swept")) {
    leaves.push_back(e.path().filename().string());
  }
  std::sort(leaves.begin(), leaves.end());
  EXPECT_EQ(leaves, (std::vector<std::string>{"1", "2"}));

  // Refusals; none changes what is served.
  v1::PromoteArmResponse none;
  for (const std::string bad : {"", "../escape", "a/b", ".."}) {
    EXPECT_EQ(Promote(x.id(), bad, "", &none).error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << "'" << bad << "'";
  }
  EXPECT_EQ(Promote("exp-999999", "swept", "", &none).error_code(), grpc::StatusCode::NOT_FOUND);
  s = Promote(x.id(), "swept", "n4096", &none);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("n8, n32"), std::string::npos) << s.error_message();

  const std::string held = Submit("held");  // queued or running until Release()
  s = Promote(held, "swept", "", &none);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("SUCCEEDED"), std::string::npos) << s.error_message();
  Release();
  EXPECT_EQ(Index(), (std::vector<std::string>{"swept/1:READY", "swept/2:READY"}));
  EXPECT_FALSE(fs::exists(root_ + "/models/swept/3"));
}

TEST_F(SweepPromoteTest, CliPromotePrintsTheVersionAndMapsRefusalsToExitTwo) {
  const v1::Experiment x = RunToEnd("tiny");
  ASSERT_EQ(x.state(), v1::EXPERIMENT_STATE_SUCCEEDED) << x.error();
  ClientOptions options;
  options.server = Address();
  options.timeout_seconds = 60;

  CliResult r = RunSweepCli(options, {"promote", x.id(), "--model", "cli-model", "--arm", "n8"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("arm n8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model cli-model version 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(root_ + "/models/cli-model/1"), std::string::npos) << r.out;
  r = RunSweepCli(options, {"promote", x.id(), "--model", "cli-model"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("version 2"), std::string::npos) << r.out;
  EXPECT_EQ(Index(), (std::vector<std::string>{"cli-model/1:READY", "cli-model/2:READY"}));

  r = RunSweepCli(options, {"promote", x.id(), "--model", "../x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("INVALID_ARGUMENT"), std::string::npos) << r.err;
  r = RunSweepCli(options, {"promote", "exp-999999", "--model", "cli-model"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("NOT_FOUND"), std::string::npos) << r.err;
  r = RunSweepCli(options, {"promote", x.id(), "--model", "cli-model", "--arm", "n5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("n8, n32"), std::string::npos) << r.err;
  r = RunSweepCli(options, {"promote", x.id()});  // --model is required
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--model"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace flashtick
