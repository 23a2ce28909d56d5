// Experiments under hostile or careless clients (docs/security.md, threat model):
// a config's size, CSV paths confined to --data-root, a memory estimate that
// refuses what cannot fit (a 128-day × 2^24-step grid, a 16 GB model) at submit;
// experiments owned by their submitter (another token gets NOT_FOUND for every
// RPC, its own request_key space and its own list; an --operator-client sees all);
// List without config_json. Runner, without gRPC: an exception in a sweep marks it
// FAILED and the worker lives on; an experiment that took the process down
// --max-resume-attempts times is FAILED at start instead of resumed; per-arm
// metric series are dropped when the experiment ends; a config's threads are
// clamped to the server's. The memory estimate with the arms in Kubernetes pods
// (--sweep-arm-runner=kubernetes) counts one arm, not max_parallel_arms.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <new>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>
#include <prometheus/registry.h>

#include "flashtick/v1/experiments.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/experiments/experiment_runner.h"
#include "server/experiments/progress_hub.h"
#include "server/experiments/sweep_memory_estimate.h"
#include "server/flashtick_server.h"
#include "tests/support/in_process_server.h"
#include "tests/support/tiny_sweep.h"
#include "research/sweep/sweep_config.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

nlohmann::json TinySweep(const std::string& name) { return TinySweepJson(name); }

constexpr const char* kTokens[] = {"alice-token-000000000000", "bob-token-00000000000000",
                                   "ops-token-00000000000000"};

class ExperimentsLimitsTest : public InProcessServerTest {
 protected:
  void SetUp() override {
    InProcessServerTest::SetUp();
    fs::create_directories(root_ + "/data");
    std::ofstream(root_ + "/tokens") << kTokens[0] << "\n" << kTokens[1] << "\n" << kTokens[2]
                                     << "\n";
    std::ofstream(root_ + "/secret.txt") << "top secret\n";
    ServerOptions o = BaseOptions();
    o.auth_token_file = root_ + "/tokens";
    o.data_root = root_ + "/data";
    o.experiment_memory_mb = 2048;
    o.max_config_bytes = 64 << 10;
    o.operator_clients = {"token#3"};
    ASSERT_NO_FATAL_FAILURE(StartServer(o));
    stub_ = v1::Experiments::NewStub(Channel());
  }
  static void As(grpc::ClientContext* ctx, int who) {
    ctx->AddMetadata("authorization", std::string("Bearer ") + kTokens[who]);
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  }
  grpc::Status Submit(int who, const std::string& json, v1::Experiment* out,
                      const std::string& key = "") {
    grpc::ClientContext ctx;
    As(&ctx, who);
    v1::SubmitSweepRequest req;
    req.set_config_json(json);
    req.set_request_key(key);
    v1::SubmitSweepResponse resp;
    grpc::Status s = stub_->SubmitSweep(&ctx, req, &resp);
    *out = resp.experiment();
    return s;
  }
  grpc::Status Get(int who, const std::string& id, v1::Experiment* out) {
    grpc::ClientContext ctx;
    As(&ctx, who);
    v1::GetExperimentRequest req;
    req.set_id(id);
    return stub_->GetExperiment(&ctx, req, out);
  }
  grpc::Status Cancel(int who, const std::string& id) {
    grpc::ClientContext ctx;
    As(&ctx, who);
    v1::CancelExperimentRequest req;
    req.set_id(id);
    v1::CancelExperimentResponse resp;
    return stub_->CancelExperiment(&ctx, req, &resp);
  }
  v1::ListExperimentsResponse List(int who) {
    grpc::ClientContext ctx;
    As(&ctx, who);
    v1::ListExperimentsResponse resp;
    EXPECT_TRUE(stub_->ListExperiments(&ctx, v1::ListExperimentsRequest(), &resp).ok());
    return resp;
  }

  std::unique_ptr<v1::Experiments::Stub> stub_;
};

TEST_F(ExperimentsLimitsTest, CsvPathsAreConfinedToTheDataRootAtSubmit) {
  auto csv = [&](const std::string& path) {
    nlohmann::json c = TinySweep("csv");
    c["data"] = {{"csv", {{"paths", {path}}}}};
    return c.dump();
  };
  v1::Experiment x;
  for (const std::string& p : {root_ + "/secret.txt", std::string("/etc/passwd"),
                               std::string("/dev/zero"), std::string("../secret.txt")}) {
    grpc::Status s = Submit(0, csv(p), &x);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << p << ": "
                                                                   << s.error_message();
    EXPECT_EQ(s.error_message().find("top secret"), std::string::npos);
  }
  EXPECT_EQ(Submit(0, csv("missing.csv"), &x).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ExperimentsLimitsTest, MemoryEstimateRefusesWhatCannotFit) {
  nlohmann::json days = TinySweep("days");
  days["data"]["synthetic"]["days"] = 128;
  days["data"]["synthetic"]["steps_per_day"] = int64_t{1} << 24;
  nlohmann::json model = TinySweep("model");
  model["model"] = {{"width", 2048}, {"layers", 16}, {"heads", 16}, {"kv_heads", 16}};
  for (const nlohmann::json& c : {days, model}) {
    // Both pass the parser's own rules: the estimate is what refuses them.
    auto parsed = ParseSweepConfig(c.dump());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    v1::Experiment x;
    grpc::Status s = Submit(0, c.dump(), &x);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_NE(s.error_message().find("--experiment-memory-mb"), std::string::npos);
  }
}

// With the arms in Kubernetes pods (--sweep-arm-runner=kubernetes) the server holds the
// days and one arm's worth, however many arms run side by side.
TEST(SweepMemoryEstimateTest, ArmsElsewhereCountOneArm) {
  nlohmann::json c = TinySweep("wide");
  c["model"] = {{"width", 256}, {"layers", 4}, {"heads", 4}, {"kv_heads", 4}};
  c["max_parallel_arms"] = 64;
  auto config = ParseSweepConfig(c.dump());
  ASSERT_TRUE(config.ok()) << config.status();
  SweepConfig one = *config;
  one.max_parallel_arms = 1;
  const double all_arms = EstimateSweepMemory(*config).total();
  const double one_arm = EstimateSweepMemory(one).total();
  ASSERT_LT(2 * one_arm, all_arms);
  const auto limit = static_cast<int64_t>((one_arm + all_arms) / 2);
  EXPECT_TRUE(absl::IsResourceExhausted(CheckSweepMemory(*config, limit)));
  EXPECT_TRUE(CheckSweepMemory(*config, limit, /*arms_elsewhere=*/true).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(
      CheckSweepMemory(*config, static_cast<int64_t>(one_arm / 2), /*arms_elsewhere=*/true)));
}

TEST_F(ExperimentsLimitsTest, ConfigSizeIsBounded) {
  std::string big = TinySweep("big").dump();
  big.insert(1, std::string(70 << 10, ' '));  // whitespace: valid JSON, 70 KiB
  v1::Experiment x;
  grpc::Status s = Submit(0, big, &x);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("--max-config-bytes"), std::string::npos);
}

TEST_F(ExperimentsLimitsTest, ExperimentsBelongToTheirSubmitter) {
  v1::Experiment mine, theirs, again;
  ASSERT_TRUE(Submit(0, TinySweep("alice").dump(), &mine, "key-1").ok());
  const std::string id = mine.id();
  v1::Experiment seen;
  EXPECT_TRUE(Get(0, id, &seen).ok());
  EXPECT_EQ(Get(1, id, &seen).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Cancel(1, id).error_code(), grpc::StatusCode::NOT_FOUND);
  {
    grpc::ClientContext ctx;
    As(&ctx, 1);
    v1::GetReportRequest req;
    req.set_id(id);
    v1::GetReportResponse resp;
    EXPECT_EQ(stub_->GetReport(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    As(&ctx, 1);
    v1::WatchExperimentRequest req;
    req.set_id(id);
    auto reader = stub_->WatchExperiment(&ctx, req);
    v1::ExperimentProgress p;
    while (reader->Read(&p)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    As(&ctx, 1);
    v1::PromoteArmRequest req;
    req.set_experiment_id(id);
    req.set_model_name("stolen");
    v1::PromoteArmResponse resp;
    EXPECT_EQ(stub_->PromoteArm(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  // Bob's equal request_key is his own submission, not Alice's experiment.
  ASSERT_TRUE(Submit(1, TinySweep("bob").dump(), &theirs, "key-1").ok());
  EXPECT_NE(theirs.id(), id);
  ASSERT_TRUE(Submit(0, TinySweep("alice").dump(), &again, "key-1").ok());
  EXPECT_EQ(again.id(), id);  // Alice's retry is still answered with hers
  // Lists: each their own, the operator both; none carries config_json.
  const auto alice = List(0), bob = List(1), ops = List(2);
  ASSERT_EQ(alice.experiments_size(), 1);
  EXPECT_EQ(alice.experiments(0).id(), id);
  ASSERT_EQ(bob.experiments_size(), 1);
  EXPECT_EQ(bob.experiments(0).id(), theirs.id());
  EXPECT_EQ(ops.experiments_size(), 2);
  for (const auto& e : ops.experiments()) EXPECT_TRUE(e.config_json().empty());
  EXPECT_FALSE(mine.config_json().empty());  // Get/Submit still carry it
  EXPECT_TRUE(Get(2, theirs.id(), &seen).ok());
  EXPECT_TRUE(Cancel(2, theirs.id()).ok());  // the operator may cancel anyone's
  EXPECT_TRUE(Cancel(0, id).ok());
}

TEST_F(ExperimentsLimitsTest, FinishedExperimentsCanBeDeletedByTheirOwner) {
  v1::Experiment x;
  ASSERT_TRUE(Submit(0, TinySweep("gone").dump(), &x).ok());
  auto remove = [&](int who, const std::string& id) {
    grpc::ClientContext ctx;
    As(&ctx, who);
    v1::DeleteExperimentRequest req;
    req.set_id(id);
    v1::DeleteExperimentResponse resp;
    return stub_->DeleteExperiment(&ctx, req, &resp);
  };
  EXPECT_EQ(remove(0, x.id()).error_code(), grpc::StatusCode::FAILED_PRECONDITION);  // not ended
  ASSERT_TRUE(Cancel(0, x.id()).ok());
  v1::Experiment seen;
  const auto end = Clock::now() + std::chrono::seconds(30);
  while (Get(0, x.id(), &seen).ok() && seen.state() != v1::EXPERIMENT_STATE_CANCELLED &&
         Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(seen.state(), v1::EXPERIMENT_STATE_CANCELLED);
  EXPECT_EQ(remove(1, x.id()).error_code(), grpc::StatusCode::NOT_FOUND);  // not Bob's
  ASSERT_TRUE(remove(0, x.id()).ok());
  EXPECT_EQ(Get(0, x.id(), &seen).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_FALSE(fs::exists(x.directory()));
  v1::Experiment next;
  ASSERT_TRUE(Submit(0, TinySweep("next").dump(), &next).ok());
  EXPECT_NE(next.id(), x.id());  // a deleted id is not handed out again
  ASSERT_TRUE(Cancel(0, next.id()).ok());
}

// ---- The runner, without gRPC ----

class RunnerRobustnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FreshTestRoot();
    auto store = ExperimentStore::Open(root_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  void TearDown() override {
    if (runner_) runner_->Shutdown();
  }
  std::string Create(const std::string& name) {
    bool created = false;
    auto r = store_->Create(name, TinySweep(name).dump(), "", &created, {});
    EXPECT_TRUE(r.ok()) << r.status();
    return r->id;
  }
  void StartRunner(RunnerOptions o) {
    o.cpu_threads = 1;
    runner_ = std::make_unique<ExperimentRunner>(store_.get(), &hub_, &metrics_, o);
    ASSERT_TRUE(runner_->Start().ok());
  }
  ExperimentRecord WaitEnded(const std::string& id) {
    const auto end = Clock::now() + std::chrono::seconds(20);
    auto r = store_->Get(id);
    while (r.ok() && !IsTerminal(r->state) && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      r = store_->Get(id);
    }
    EXPECT_TRUE(r.ok());
    return *r;
  }
  // Series in the registry that carry label experiment=`id`.
  int SeriesOf(const std::string& id) {
    int n = 0;
    for (const auto& family : metrics_.registry()->Collect()) {
      for (const auto& m : family.metric) {
        for (const auto& l : m.label) n += l.name == "experiment" && l.value == id;
      }
    }
    return n;
  }

  std::string root_;
  std::unique_ptr<ExperimentStore> store_;
  ProgressHub hub_;
  Metrics metrics_;
  std::unique_ptr<ExperimentRunner> runner_;
};

TEST_F(RunnerRobustnessTest, AnExceptionMarksTheExperimentFailedAndTheWorkerGoesOn) {
  const std::string a = Create("a"), b = Create("b");
  std::atomic<int> runs{0};
  RunnerOptions o;
  o.run_sweep = [&](const SweepConfig&, const SweepEngineOptions&,
                    const SweepHooks&) -> absl::StatusOr<SweepOutcome> {
    ++runs;
    throw std::bad_alloc();
  };
  StartRunner(o);
  const ExperimentRecord ra = WaitEnded(a), rb = WaitEnded(b);
  EXPECT_EQ(ra.state, ExpState::kFailed);
  EXPECT_NE(ra.error.find("out of memory"), std::string::npos) << ra.error;
  EXPECT_EQ(rb.state, ExpState::kFailed);  // the one worker survived the first
  EXPECT_EQ(runs.load(), 2);
  EXPECT_FALSE(fs::exists(ra.dir + "/start_attempts"));  // a clean end clears the count
}

TEST_F(RunnerRobustnessTest, AnExperimentThatKeepsKillingTheServerIsNotResumed) {
  const std::string id = Create("crashy");
  ASSERT_TRUE(store_->SetState(id, ExpState::kRunning, "started").ok());
  const std::string dir = store_->Get(id)->dir;
  fs::create_directories(dir);
  std::ofstream(dir + "/start_attempts") << 3 << "\n";  // three starts, no end
  std::atomic<int> runs{0};
  RunnerOptions o;
  o.max_resume_attempts = 3;
  o.run_sweep = [&](const SweepConfig&, const SweepEngineOptions&,
                    const SweepHooks&) -> absl::StatusOr<SweepOutcome> {
    ++runs;
    return absl::InternalError("must not run");
  };
  StartRunner(o);
  const ExperimentRecord r = WaitEnded(id);
  EXPECT_EQ(r.state, ExpState::kFailed);
  EXPECT_NE(r.error.find("started 3 times"), std::string::npos) << r.error;
  EXPECT_EQ(runs.load(), 0);
}

TEST_F(RunnerRobustnessTest, AStartIsCountedUntilItEndsCleanly) {
  const std::string id = Create("counted");
  std::atomic<int> seen_count{-1};
  std::string dir = store_->Get(id)->dir;
  RunnerOptions o;
  o.run_sweep = [&](const SweepConfig&, const SweepEngineOptions&,
                    const SweepHooks&) -> absl::StatusOr<SweepOutcome> {
    int n = -1;
    std::ifstream(dir + "/start_attempts") >> n;
    seen_count = n;
    return absl::InternalError("done");
  };
  StartRunner(o);
  WaitEnded(id);
  EXPECT_EQ(seen_count.load(), 1);  // written before the sweep ran
  EXPECT_FALSE(fs::exists(dir + "/start_attempts"));
}

TEST_F(RunnerRobustnessTest, ArmSeriesAreRetiredWhenTheExperimentEnds) {
  const std::string id = Create("series");
  RunnerOptions o;
  o.run_sweep = [&](const SweepConfig&, const SweepEngineOptions&,
                    const SweepHooks& hooks) -> absl::StatusOr<SweepOutcome> {
    SweepEvent e;
    e.arm.arm_id = "n8";
    e.arm.phase = "train";
    e.arm.step = 1;
    e.arm.total_steps = 2;
    hooks.on_progress(e);
    EXPECT_GT(SeriesOf(id), 3);  // loss, step seconds, steps, running, peak bytes
    return absl::InternalError("ends");
  };
  StartRunner(o);
  EXPECT_EQ(WaitEnded(id).state, ExpState::kFailed);
  EXPECT_EQ(SeriesOf(id), 0);
}

TEST_F(RunnerRobustnessTest, AModelTooLargeToAllocateFailsTheExperimentNotTheProcess) {
  // Stored directly (as an experiment submitted before the memory estimate existed
  // would be): the real engine, whose arm threads allocate the model. A model of
  // ~800 GB of parameters cannot be allocated; the experiment must end FAILED and
  // this process live on.
  nlohmann::json c = TinySweep("huge");
  c["model"] = {{"width", 8192}, {"layers", 256}, {"heads", 64}, {"kv_heads", 64}};
  c["precision_check"] = {{"enabled", false}};
  ASSERT_TRUE(ParseSweepConfig(c.dump()).ok());
  bool created = false;
  auto r = store_->Create("huge", c.dump(), "", &created, {});
  ASSERT_TRUE(r.ok()) << r.status();
  StartRunner(RunnerOptions{});
  const ExperimentRecord done = WaitEnded(r->id);
  EXPECT_EQ(done.state, ExpState::kFailed) << done.error;
}

TEST_F(RunnerRobustnessTest, ACancelBetweenThePopAndTheRunningListIsNotLost) {
  // The cancel lands after the worker took the id off the queue and read its
  // record, before it lists it as running: Cancel finds it neither queued nor
  // running. The store's cancel mark, read again once the id is listed, keeps it.
  const std::string id = Create("raced");
  std::mutex mu;
  absl::Status cancel_status = absl::UnknownError("the seam never ran");
  std::atomic<bool> sweep_saw_cancel{false};
  std::atomic<int> runs{0};
  RunnerOptions o;
  o.before_register = [&](const std::string& popped) {
    const absl::Status s = runner_->Cancel(popped);
    std::lock_guard<std::mutex> lock(mu);
    cancel_status = s;
  };
  o.run_sweep = [&](const SweepConfig& config, const SweepEngineOptions&,
                    const SweepHooks& hooks) -> absl::StatusOr<SweepOutcome> {
    ++runs;
    sweep_saw_cancel = hooks.cancel != nullptr && hooks.cancel->load();
    SweepOutcome outcome;
    outcome.config = config;
    outcome.cancelled = sweep_saw_cancel.load();  // the engine stops at once when told
    outcome.verdict_error = "test sweep";
    return outcome;
  };
  StartRunner(o);
  const ExperimentRecord r = WaitEnded(id);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(cancel_status.ok()) << cancel_status;
  }
  EXPECT_EQ(r.state, ExpState::kCancelled) << ExpStateName(r.state) << ": " << r.error;
  EXPECT_LE(runs.load(), 1);
  if (runs.load() == 1) {
    EXPECT_TRUE(sweep_saw_cancel.load());
  }
}

int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(ResumeOrder, GrpcServesBeforeAnyExperimentResumes) {
  // An experiment left RUNNING by a process that died resumes at the next start;
  // whatever it does then, the server must already answer (and can cancel it):
  // the resumed sweep itself asks the server's health service.
  const std::string root = FreshTestRoot();
  fs::create_directories(root + "/models");
  fs::create_directories(root + "/experiments");
  std::string id;
  {
    auto store = ExperimentStore::Open(root + "/experiments");
    ASSERT_TRUE(store.ok()) << store.status();
    bool created = false;
    auto r = (*store)->Create("interrupted", TinySweep("interrupted").dump(), "", &created, {});
    ASSERT_TRUE(r.ok()) << r.status();
    id = r->id;
    ASSERT_TRUE((*store)->SetState(id, ExpState::kRunning, "started").ok());
  }
  const int port = FreeLoopbackPort();
  ASSERT_GT(port, 0);
  std::atomic<bool> asked{false}, serving{false};
  std::mutex mu;
  std::string answer = "never asked";
  FlashtickServer::ExperimentSeams seams;
  // Asked when the runner starts, on the thread that starts the server, before it
  // requeues the interrupted experiment or starts a worker: resumes come only after.
  seams.on_start = [&] {
    auto stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;  // no wait_for_ready: a port not yet listening fails at once
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = stub->Check(&ctx, request, &response);
    {
      std::lock_guard<std::mutex> lock(mu);
      answer = status.ok() ? "status " + std::to_string(response.status())
                           : "error " + status.error_message();
    }
    serving = status.ok() && response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
    asked = true;
  };
  std::atomic<bool> resumed{false};
  seams.run_sweep = [&](const SweepConfig& config, const SweepEngineOptions&,
                        const SweepHooks&) -> absl::StatusOr<SweepOutcome> {
    resumed = true;
    SweepOutcome outcome;
    outcome.config = config;
    outcome.verdict_error = "test sweep";
    return outcome;
  };
  ServerOptions o = InProcessServerOptions(root);
  o.listen = "127.0.0.1:" + std::to_string(port);
  o.experiment_memory_mb = 2048;
  auto server = FlashtickServer::Start(o, seams);
  ASSERT_TRUE(server.ok()) << server.status();
  const auto end = Clock::now() + std::chrono::seconds(20);
  while (!resumed.load() && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  (*server)->Shutdown();
  ASSERT_TRUE(asked.load()) << "the experiment runner never started";
  EXPECT_TRUE(resumed.load()) << "the interrupted experiment was not resumed";
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_TRUE(serving.load()) << "health answered " << answer << " when the resume began";
}

TEST(ClampToServerThreads, AConfigCannotOutgrowTheServersThreads) {
  SweepConfig c;
  c.cpu_threads = 1024;
  c.max_parallel_arms = 64;
  c.replicas_per_arm = 1;
  EXPECT_FALSE(ClampToServerThreads(&c, 1).empty());
  EXPECT_EQ(c.max_parallel_arms, 1);
  EXPECT_EQ(c.cpu_threads, 1);

  SweepConfig d;
  d.max_parallel_arms = 4;
  d.replicas_per_arm = 2;
  d.cpu_threads = 0;  // "the server's"
  ClampToServerThreads(&d, 8);
  EXPECT_LE(d.max_parallel_arms * d.replicas_per_arm * d.cpu_threads, 8);
  EXPECT_EQ(d.max_parallel_arms, 4);
  EXPECT_EQ(d.cpu_threads, 1);

  SweepConfig e;  // defaults on an 8-thread server: one arm with all 8
  ClampToServerThreads(&e, 8);
  EXPECT_EQ(e.max_parallel_arms, 1);
  EXPECT_EQ(e.cpu_threads, 8);
}

}  // namespace
}  // namespace flashtick
