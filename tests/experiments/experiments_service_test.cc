// flashtick.v1.Experiments on an in-process flashtickd (CPU backend) over a real
// gRPC channel: validation (each bad request → its code and a message naming the
// problem), a small planted-cue sweep submitted (returns at once), watched (arm,
// fold, step, loss, ETA; ends SUCCEEDED), read back (arms, verdict), reported
// (JSON, Markdown, plot files) and listed; the training metrics; cancel (stops,
// keeps the finished arm and reports it); and a restart in the middle of a sweep
// (graceful shutdown, new server on the same --experiment-dir) that resumes from
// the checkpoints and ends with exactly the results of an uninterrupted run.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "flashtick/v1/experiments.grpc.pb.h"
#include "tests/support/in_process_server.h"
#include "tests/support/tiny_sweep.h"

namespace flashtick {
namespace {

using Clock = std::chrono::steady_clock;

// The tests' tiny sweep (tests/support/tiny_sweep.h) over `days` days.
std::string TinySweep(const std::string& name, int days = 8) {
  nlohmann::json j = TinySweepJson(name);
  j["data"]["synthetic"]["days"] = days;
  return j.dump();
}

class ExperimentsServiceTest : public InProcessServerTest {
 protected:
  void SetUp() override {
    InProcessServerTest::SetUp();
    StartServer();
  }
  // On root_'s --experiment-dir, so a second start resumes what the first left.
  void StartServer() {
    ServerOptions o = BaseOptions();
    o.report_python = FLASHTICK_PYTHON;
    ASSERT_NO_FATAL_FAILURE(InProcessServerTest::StartServer(o));
    stub_ = v1::Experiments::NewStub(Channel());
  }
  grpc::Status Submit(const std::string& json, v1::Experiment* out, const std::string& key = "") {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;
    req.set_config_json(json);
    req.set_request_key(key);
    v1::SubmitSweepResponse resp;
    grpc::Status s = stub_->SubmitSweep(&ctx, req, &resp);
    *out = resp.experiment();
    return s;
  }
  v1::Experiment Get(const std::string& id) {
    grpc::ClientContext ctx;
    v1::GetExperimentRequest req;
    req.set_id(id);
    v1::Experiment x;
    EXPECT_TRUE(stub_->GetExperiment(&ctx, req, &x).ok());
    return x;
  }
  // Polls until `done(x)` or the timeout.
  template <typename F>
  v1::Experiment WaitFor(const std::string& id, F done, double seconds = 300) {
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    v1::Experiment x = Get(id);
    while (!done(x) && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      x = Get(id);
    }
    return x;
  }
  static bool Ended(const v1::Experiment& x) {
    return x.state() == v1::EXPERIMENT_STATE_SUCCEEDED ||
           x.state() == v1::EXPERIMENT_STATE_FAILED || x.state() == v1::EXPERIMENT_STATE_CANCELLED;
  }

  std::unique_ptr<v1::Experiments::Stub> stub_;
};

TEST_F(ExperimentsServiceTest, BadRequestsAreRefusedWithTheReason) {
  v1::Experiment x;
  grpc::Status s = Submit(R"({"contexts": [8, 8], "cost_bps": -1})", &x);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("contexts must be distinct"), std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("cost_bps must be a number"), std::string::npos);
  {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;  // nothing
    v1::SubmitSweepResponse resp;
    s = stub_->SubmitSweep(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("exactly one of config, config_json and preset"),
              std::string::npos);
  }
  {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;
    req.set_preset("no-such");
    v1::SubmitSweepResponse resp;
    s = stub_->SubmitSweep(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("demo"), std::string::npos) << s.error_message();
  }
  {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;  // a typed config with bad fields: the JSON route's checks
    req.mutable_config()->add_contexts(8);
    req.mutable_config()->add_contexts(8);
    req.mutable_config()->mutable_labels()->set_alpha_bps(-0.2);
    v1::SubmitSweepResponse resp;
    s = stub_->SubmitSweep(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("labels.alpha_bps must be a number in [0"),
              std::string::npos) << s.error_message();
    EXPECT_NE(s.error_message().find("contexts must be distinct"), std::string::npos)
        << s.error_message();
  }
  grpc::ClientContext ctx;
  v1::GetExperimentRequest req;
  req.set_id("exp-424242");
  s = stub_->GetExperiment(&ctx, req, &x);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("exp-424242"), std::string::npos);
  // Every RPC that takes an id names the unknown id, and none creates anything.
  {
    grpc::ClientContext c;
    v1::CancelExperimentRequest r;
    r.set_id("exp-424242");
    v1::CancelExperimentResponse resp;
    s = stub_->CancelExperiment(&c, r, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
    EXPECT_NE(s.error_message().find("exp-424242"), std::string::npos) << s.error_message();
  }
  {
    grpc::ClientContext c;
    v1::GetReportRequest r;
    r.set_id("exp-424242");
    v1::GetReportResponse resp;
    s = stub_->GetReport(&c, r, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
    EXPECT_NE(s.error_message().find("exp-424242"), std::string::npos) << s.error_message();
  }
  {
    grpc::ClientContext c;
    v1::WatchExperimentRequest r;
    r.set_id("exp-424242");
    auto reader = stub_->WatchExperiment(&c, r);
    v1::ExperimentProgress event;
    while (reader->Read(&event)) {
    }
    s = reader->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
    EXPECT_NE(s.error_message().find("exp-424242"), std::string::npos) << s.error_message();
  }
  grpc::ClientContext lctx;
  v1::ListExperimentsRequest lreq;
  v1::ListExperimentsResponse list;
  ASSERT_TRUE(stub_->ListExperiments(&lctx, lreq, &list).ok());
  EXPECT_EQ(list.experiments_size(), 0) << "a refused request created an experiment";
}

TEST_F(ExperimentsServiceTest, SubmitWatchReportList) {
  v1::Experiment x;
  const auto t0 = Clock::now();
  ASSERT_TRUE(Submit(TinySweep("tiny"), &x, "once").ok());
  const double submit_s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_LT(submit_s, 2.0) << "SubmitSweep must return at once";
  EXPECT_EQ(x.id(), "exp-000001");
  EXPECT_EQ(x.config().contexts_size(), 2);
  v1::Experiment again;
  ASSERT_TRUE(Submit(TinySweep("tiny"), &again, "once").ok());
  EXPECT_EQ(again.id(), x.id()) << "request_key makes submit idempotent";
  {
    // The same configuration as a message resolves to the same stored JSON, field for
    // field: the message is the schema of the JSON (ResolveSweepConfig creates nothing).
    grpc::ClientContext c;
    v1::SubmitSweepRequest req;
    *req.mutable_config() = x.config();
    v1::ResolveSweepConfigResponse resolved;
    ASSERT_TRUE(stub_->ResolveSweepConfig(&c, req, &resolved).ok());
    EXPECT_EQ(nlohmann::json::parse(resolved.config_json()), nlohmann::json::parse(x.config_json()));
  }

  grpc::ClientContext ctx;
  v1::WatchExperimentRequest wreq;
  wreq.set_id(x.id());
  auto reader = stub_->WatchExperiment(&ctx, wreq);
  v1::ExperimentProgress e;
  int train_events = 0, with_eta = 0;
  std::set<std::string> arms;
  v1::ExperimentState last = v1::EXPERIMENT_STATE_UNSPECIFIED;
  while (reader->Read(&e)) {
    if (e.phase() == "train") {
      ++train_events;
      arms.insert(e.arm_id());
      EXPECT_GT(e.total_steps(), 0);
      EXPECT_GT(e.loss(), 0);
      with_eta += e.eta_seconds() >= 0;
    }
    last = e.state();
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(last, v1::EXPERIMENT_STATE_SUCCEEDED);
  EXPECT_GT(train_events, 0);
  EXPECT_GT(with_eta, 0);
  EXPECT_EQ(arms, (std::set<std::string>{"n8", "n32"}));

  x = Get(x.id());
  ASSERT_EQ(x.state(), v1::EXPERIMENT_STATE_SUCCEEDED) << x.error();
  ASSERT_EQ(x.arms_size(), 2);
  for (const v1::ArmStatus& a : x.arms()) {
    EXPECT_EQ(a.arm_state(), "done");
    EXPECT_EQ(a.step(), a.total_steps());
    EXPECT_GT(a.tokens_per_second(), 0);
    EXPECT_EQ(a.kernel_path(), "cpu_reference");
  }
  EXPECT_FALSE(x.verdict().summary().empty());
  std::printf("tiny sweep verdict: %s\n", x.verdict().summary().c_str());

  for (auto format : {v1::REPORT_FORMAT_JSON, v1::REPORT_FORMAT_MARKDOWN}) {
    grpc::ClientContext rctx;
    v1::GetReportRequest rreq;
    rreq.set_id(x.id());
    rreq.set_format(format);
    rreq.set_include_files(true);
    v1::GetReportResponse report;
    ASSERT_TRUE(stub_->GetReport(&rctx, rreq, &report).ok());
    if (format == v1::REPORT_FORMAT_JSON) {
      const auto j = nlohmann::json::parse(report.content());
      EXPECT_EQ(j["format"], "flashtick-sweep-report");
      EXPECT_EQ(j["arms"].size(), 2u);
    } else {
      EXPECT_NE(report.content().find("## Verdict"), std::string::npos);
    }
    std::set<std::string> names;
    for (const auto& f : report.files()) names.insert(f.name());
    EXPECT_TRUE(names.count("report.json") && names.count("report.md"));
    const bool plots = names.count("cost_vs_n.png") && names.count("benefit_vs_n.png") &&
                       names.count("daily_returns.png") && names.count("loss_curves.png");
    EXPECT_TRUE(plots) << "the test Python has matplotlib, so every plot must be drawn";
  }
  grpc::ClientContext lctx;
  v1::ListExperimentsRequest lreq;
  v1::ListExperimentsResponse list;
  ASSERT_TRUE(stub_->ListExperiments(&lctx, lreq, &list).ok());
  ASSERT_EQ(list.experiments_size(), 1);
  EXPECT_EQ(list.experiments(0).id(), x.id());
}

TEST_F(ExperimentsServiceTest, CancelKeepsWhatFinished) {
  v1::Experiment x;
  // 40 days: the second arm trains and scores 37 folds (seconds), so the cancel, sent within a
  // poll of its first step, lands long before its end even on a loaded CI machine.
  ASSERT_TRUE(Submit(TinySweep("cancel", 40), &x).ok());
  // Wait for the first arm to finish and the second to start training.
  x = WaitFor(x.id(), [](const v1::Experiment& e) {
    return e.arms_size() == 2 && e.arms(0).arm_state() == "done" && e.arms(1).step() > 0;
  });
  ASSERT_EQ(x.arms(0).arm_state(), "done");
  grpc::ClientContext ctx;
  v1::CancelExperimentRequest req;
  req.set_id(x.id());
  v1::CancelExperimentResponse resp;
  ASSERT_TRUE(stub_->CancelExperiment(&ctx, req, &resp).ok());
  x = WaitFor(x.id(), Ended);
  EXPECT_EQ(x.state(), v1::EXPERIMENT_STATE_CANCELLED);
  EXPECT_EQ(x.arms(0).arm_state(), "done");
  EXPECT_EQ(x.arms(1).arm_state(), "cancelled");
  EXPECT_LT(x.arms(1).step(), x.arms(1).total_steps());
  grpc::ClientContext rctx;
  v1::GetReportRequest rreq;
  rreq.set_id(x.id());
  v1::GetReportResponse report;
  ASSERT_TRUE(stub_->GetReport(&rctx, rreq, &report).ok());
  const auto j = nlohmann::json::parse(report.content());
  EXPECT_EQ(j["status"], "cancelled");
  EXPECT_EQ(j["arms"][0]["state"], "done");
  EXPECT_FALSE(j["arms"][0]["days"].empty()) << "the finished arm's results are kept";
}

TEST_F(ExperimentsServiceTest, RestartResumesFromCheckpoints) {
  // Reference: the same sweep straight through.
  v1::Experiment ref;
  ASSERT_TRUE(Submit(TinySweep("restart"), &ref).ok());
  ref = WaitFor(ref.id(), Ended);
  ASSERT_EQ(ref.state(), v1::EXPERIMENT_STATE_SUCCEEDED) << ref.error();

  v1::Experiment x;
  ASSERT_TRUE(Submit(TinySweep("restart"), &x).ok());
  x = WaitFor(x.id(), [](const v1::Experiment& e) {
    return e.arms_size() == 2 && e.arms(1).step() > 0;
  });
  const std::string id = x.id();
  StopServer();  // SIGTERM path: the sweep stops between steps
  StartServer();  // same --experiment-dir
  x = WaitFor(id, Ended);
  ASSERT_EQ(x.state(), v1::EXPERIMENT_STATE_SUCCEEDED) << x.error();
  // The resumed sweep trained exactly as the straight one: same daily returns.
  auto read = [&](const std::string& eid) {
    grpc::ClientContext ctx;
    v1::GetReportRequest req;
    req.set_id(eid);
    v1::GetReportResponse r;
    EXPECT_TRUE(stub_->GetReport(&ctx, req, &r).ok());
    return nlohmann::json::parse(r.content());
  };
  const auto a = read(ref.id()), b = read(id);
  for (size_t arm = 0; arm < 2; ++arm) {
    ASSERT_EQ(a["arms"][arm]["days"].size(), b["arms"][arm]["days"].size());
    for (size_t d = 0; d < a["arms"][arm]["days"].size(); ++d) {
      EXPECT_EQ(a["arms"][arm]["days"][d]["daily_return"].get<double>(),
                b["arms"][arm]["days"][d]["daily_return"].get<double>())
          << "arm " << arm << " day " << d;
    }
  }
  EXPECT_EQ(a["verdict"]["summary"], b["verdict"]["summary"]);
}

}  // namespace
}  // namespace flashtick
