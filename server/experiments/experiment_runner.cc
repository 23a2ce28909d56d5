// ExperimentRunner (see experiment_runner.h).
#include "server/experiments/experiment_runner.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <thread>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "server/experiments/experiment_proto.h"
#include "server/experiments/experiment_sweep_hooks.h"
#include "server/logging.h"
#include "research/sweep/arm_result.h"

namespace flashtick {
namespace {

std::string VerdictJson(const SweepOutcome& o) {
  nlohmann::json v = {{"passed", false}, {"summary", o.verdict_error}};
  if (o.verdict.has_value()) {
    const GateVerdict& g = *o.verdict;
    const int winner = g.best_arm >= 0 ? g.best_arm : g.longest_arm;
    v = {{"passed", g.passed},
         {"summary", g.Summary()},
         {"winner_context", g.passed ? o.config.contexts[winner] : int64_t{0}},
         {"best_context", g.best_arm >= 0 ? o.config.contexts[g.best_arm] : int64_t{0}},
         {"dsr", std::isfinite(g.dsr.dsr) ? g.dsr.dsr : 0.0},
         {"pbo", g.pbo.pbo}};
  }
  return v.dump();
}

constexpr const char* kAttemptsFile = "start_attempts";

int ReadAttempts(const std::string& dir) {
  std::ifstream in(std::filesystem::path(dir) / kAttemptsFile);
  int n = 0;
  if (!(in >> n) || n < 0) return 0;
  return n;
}

void WriteAttempts(const std::string& dir, int n) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream(std::filesystem::path(dir) / kAttemptsFile, std::ios::trunc) << n << "\n";
}

void ClearAttempts(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove(std::filesystem::path(dir) / kAttemptsFile, ec);
}

}  // namespace

std::string ClampToServerThreads(SweepConfig* config, int server_threads) {
  const int budget = server_threads > 0
                         ? server_threads
                         : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int replicas = std::max(1, config->replicas_per_arm);
  const int parallel =
      std::clamp(config->max_parallel_arms, 1, std::max(1, budget / replicas));
  const int per_arm = std::max(1, budget / (parallel * replicas));
  const int threads = config->cpu_threads > 0 ? std::min(config->cpu_threads, per_arm) : per_arm;
  std::string note;
  if (parallel != config->max_parallel_arms || threads != config->cpu_threads) {
    note = absl::StrCat("max_parallel_arms ", config->max_parallel_arms, " -> ", parallel,
                        ", cpu_threads ", config->cpu_threads, " -> ", threads,
                        " (the server's thread budget is ", budget, ")");
  }
  config->max_parallel_arms = parallel;
  config->cpu_threads = threads;
  return note;
}

ExperimentRunner::ExperimentRunner(ExperimentStore* store, ProgressHub* hub, Metrics* metrics,
                                   RunnerOptions options)
    : store_(store), hub_(hub), metrics_(metrics), options_(std::move(options)) {}

ExperimentRunner::~ExperimentRunner() { Shutdown(); }

absl::Status ExperimentRunner::Start() {
  if (options_.on_start) options_.on_start();
  auto unfinished = store_->Unfinished();
  if (!unfinished.ok()) return unfinished.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const ExperimentRecord& r : *unfinished) queue_.push_back(r.id);
  }
  for (const ExperimentRecord& r : *unfinished) {
    LogInfo(absl::StrCat("experiment ", r.id, " (", ExpStateName(r.state),
                         ") queued again after restart"));
  }
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  UpdateStateGauge();
  return absl::OkStatus();
}

void ExperimentRunner::Enqueue(const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(id);
  }
  cv_.notify_one();
  UpdateStateGauge();
}

absl::Status ExperimentRunner::Cancel(const std::string& id) {
  auto record = store_->Get(id);
  if (!record.ok()) return record.status();
  if (IsTerminal(record->state)) return absl::OkStatus();
  if (absl::Status s = store_->RequestCancel(id); !s.ok()) return s;
  bool was_queued = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = running_.find(id);
    if (it != running_.end()) {
      it->second->user_cancel = true;
      it->second->cancel = true;
    } else {
      for (auto q = queue_.begin(); q != queue_.end(); ++q) {
        if (*q == id) {
          queue_.erase(q);
          was_queued = true;
          break;
        }
      }
    }
  }
  if (was_queued) {
    if (absl::Status s = store_->SetState(id, ExpState::kCancelled, "cancelled while queued");
        !s.ok()) {
      return s;
    }
    auto r = store_->Get(id);
    if (r.ok()) PublishState(*r, "cancelled while queued");
    UpdateStateGauge();
  }
  return absl::OkStatus();
}

void ExperimentRunner::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& [id, run] : running_) run->cancel = true;  // stays RUNNING: resumes on restart
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void ExperimentRunner::UpdateStateGauge() {
  auto counts = store_->CountByState();
  if (!counts.ok()) return;
  for (const auto& [state, n] : *counts) metrics_->SetExperiments(ExpStateName(state), n);
}

void ExperimentRunner::PublishState(const ExperimentRecord& r, const std::string& message) {
  hub_->Publish(StateEvent(r, message));
}

void ExperimentRunner::WorkerLoop() {
  for (;;) {
    std::string id;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      id = queue_.front();
      queue_.pop_front();
    }
    RunOne(id);
  }
}

SweepEngineOptions ExperimentRunner::EngineOptions(const std::string& dir) const {
  SweepEngineOptions eo;
  eo.dir = dir;
  eo.device = options_.device;
  eo.cpu_threads = options_.cpu_threads;
  eo.python = options_.python;
  eo.plot_script = options_.plot_script;
  eo.executor = options_.arm_executor;
  // Arms trained elsewhere: the precision check runs here, on this server's device.
  if (eo.executor != nullptr) eo.precision_device = options_.device;
  return eo;
}

absl::StatusOr<SweepOutcome> ExperimentRunner::RunSweep(const ExperimentRecord& record,
                                                      Running* run) {
  const std::string& id = record.id;
  auto config = ParseSweepConfig(record.config_json);
  if (!config.ok()) return config.status();
  if (options_.arm_executor == nullptr) {  // arms train here, on this server's threads
    const std::string clamped = ClampToServerThreads(&*config, options_.cpu_threads);
    if (!clamped.empty()) LogInfo(absl::StrCat("experiment ", id, ": ", clamped));
  }
  ExperimentSweepHooks reporter(id, *config, store_, hub_, metrics_,
                                options_.publish_every_seconds, options_.store_every_seconds);
  const SweepHooks hooks = reporter.Hooks(&run->cancel);
  const SweepEngineOptions eo = EngineOptions(record.dir);
  absl::StatusOr<SweepOutcome> outcome =
      options_.run_sweep ? options_.run_sweep(*config, eo, hooks) : SweepEngine::Run(*config, eo, hooks);
  reporter.ClearRunning();
  return outcome;
}

absl::StatusOr<SweepOutcome> ExperimentRunner::RunSweepCatching(const ExperimentRecord& record,
                                                              Running* run) {
  try {
    return RunSweep(record, run);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        "out of memory: an allocation failed while the sweep ran (std::bad_alloc); use a "
        "smaller configuration");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("the sweep threw an exception: ", e.what()));
  } catch (...) {
    return absl::InternalError("the sweep threw an unknown exception");
  }
}

std::shared_ptr<ExperimentRunner::Running> ExperimentRunner::Register(
    const ExperimentRecord& record) {
  const std::string& id = record.id;
  auto run = std::make_shared<Running>();
  if (options_.before_register) options_.before_register(id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return nullptr;
    running_[id] = run;
    if (record.cancel_requested) run->user_cancel = run->cancel = true;
  }
  // A cancel that came between the pop and the line above found the id neither
  // queued nor running; it did mark the store first, so read the mark again.
  if (auto fresh = store_->Get(id); fresh.ok() && fresh->cancel_requested) {
    std::lock_guard<std::mutex> lock(mu_);
    run->user_cancel = run->cancel = true;
  }
  return run;
}

void ExperimentRunner::Unregister(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  running_.erase(id);
}

void ExperimentRunner::FailRepeatedCrash(const ExperimentRecord& record, int attempts) {
  Unregister(record.id);
  const std::string message = absl::StrCat(
      "failed: started ", attempts, " times without ending (the server stopped during each "
      "run, e.g. out of memory); not started again (--max-resume-attempts ",
      options_.max_resume_attempts, ")");
  (void)store_->SetState(record.id, ExpState::kFailed, message, message);
  ClearAttempts(record.dir);
  AnnounceEnd(record.id, message);
}

void ExperimentRunner::MarkStarted(ExperimentRecord* record) {
  const bool resumed = record->state == ExpState::kRunning;
  const std::string started = resumed ? "resumed after a restart" : "started";
  (void)store_->SetState(record->id, ExpState::kRunning, started);
  record->state = ExpState::kRunning;
  PublishState(*record, started);
  UpdateStateGauge();
  LogInfo(absl::StrCat("experiment ", record->id, " ", started));
}

std::string ExperimentRunner::StoreOutcome(const std::string& id,
                                           const absl::StatusOr<SweepOutcome>& outcome,
                                           bool user_cancel) {
  std::string message;
  if (!outcome.ok()) {
    message = absl::StrCat("failed: ", outcome.status().ToString());
    (void)store_->SetState(id, ExpState::kFailed, message, outcome.status().ToString());
  } else if (outcome->cancelled && !user_cancel) {
    // Stopped by Shutdown, not by the user: left RUNNING so Start() resumes it.
    message = "interrupted by shutdown; resumes from its checkpoints on restart";
    (void)store_->SetState(id, ExpState::kRunning, message);
  } else if (outcome->cancelled) {
    int done = 0;
    for (const ArmResult& a : outcome->arms) done += a.state == ArmState::kDone;
    message = absl::StrCat("cancelled; ", done, " of ", outcome->arms.size(),
                           " arms had finished and are kept");
    (void)store_->SetState(id, ExpState::kCancelled, message);
  } else {
    message = outcome->verdict.has_value() ? outcome->verdict->Summary() : outcome->verdict_error;
    (void)store_->SetState(id, ExpState::kSucceeded, message, "", VerdictJson(*outcome));
  }
  // The outcome's arms supersede the throttled progress rows the hooks stored.
  if (outcome.ok()) {
    for (size_t i = 0; i < outcome->arms.size(); ++i) {
      (void)store_->UpsertArm(ArmFromResult(id, static_cast<int>(i), outcome->arms[i]));
    }
  }
  return message;
}

void ExperimentRunner::RetireArmMetrics(const std::string& id) {
  if (auto arms = store_->Arms(id); arms.ok()) {
    for (const ArmRecord& a : *arms) metrics_->RetireArm(id, a.arm_id);
  }
}

void ExperimentRunner::AnnounceEnd(const std::string& id, const std::string& message) {
  LogInfo(absl::StrCat("experiment ", id, ": ", message));
  auto final_record = store_->Get(id);
  if (final_record.ok()) PublishState(*final_record, message);
  UpdateStateGauge();
}

void ExperimentRunner::RunOne(const std::string& id) {
  auto record = store_->Get(id);
  if (!record.ok() || IsTerminal(record->state)) return;
  const std::shared_ptr<Running> run = Register(*record);
  if (run == nullptr) return;  // shutting down: stays in the store to resume on restart
  // A start that never reached a clean end (below) means the process died in it.
  const int attempts = ReadAttempts(record->dir);
  if (attempts >= options_.max_resume_attempts) {
    FailRepeatedCrash(*record, attempts);
    return;
  }
  WriteAttempts(record->dir, attempts + 1);
  MarkStarted(&*record);

  const absl::StatusOr<SweepOutcome> outcome = RunSweepCatching(*record, run.get());
  Unregister(id);
  const std::string message = StoreOutcome(id, outcome, run->user_cancel);
  ClearAttempts(record->dir);  // a clean end, however the sweep ended
  RetireArmMetrics(id);
  AnnounceEnd(id, message);
}

}  // namespace flashtick
