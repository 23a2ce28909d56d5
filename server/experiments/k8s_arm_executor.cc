// K8sArmExecutor (see k8s_arm_executor.h).
#include "server/experiments/k8s_arm_executor.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "research/sweep/arm_runner.h"
#include "server/experiments/k8s_job_spec.h"
#include "server/logging.h"

namespace flashtick {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// "1,3-5" (a Job's completedIndexes / failedIndexes) → {1, 3, 4, 5}; bounded by `n`.
std::set<int> ParseIndexSet(const std::string& text, int n) {
  std::set<int> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> ends = absl::StrSplit(part, '-');
    int lo = 0, hi = 0;
    if (ends.empty() || ends.size() > 2 || !absl::SimpleAtoi(ends[0], &lo)) continue;
    hi = lo;
    if (ends.size() == 2 && !absl::SimpleAtoi(ends[1], &hi)) continue;
    for (int i = std::max(lo, 0); i <= std::min(hi, n - 1); ++i) out.insert(i);
  }
  return out;
}

// The API's error message ("message" of a Status object) or the body's start.
std::string ApiMessage(const K8sResponse& r) {
  json j = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    return j["message"].get<std::string>();
  }
  return r.body.substr(0, 200);
}

absl::Status HttpStatus(const K8sResponse& r, const std::string& what) {
  const std::string msg = absl::StrCat(what, ": HTTP ", r.status, ": ", ApiMessage(r));
  switch (r.status) {
    case 400:
    case 422:
      return absl::InvalidArgumentError(msg);
    case 401:
      return absl::UnauthenticatedError(msg);
    case 403:
      return absl::PermissionDeniedError(msg);
    case 404:
      return absl::NotFoundError(msg);
    case 409:
      return absl::AlreadyExistsError(msg);
    default:
      return absl::UnavailableError(msg);
  }
}

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

struct JobStatus {
  bool finished = false;       // a Complete or Failed condition is True
  std::string failed_message;  // the Failed condition's reason and message
  std::set<int> completed, failed;
};

JobStatus ParseJobStatus(const json& job, int completions) {
  JobStatus st;
  const json status = job.is_object() && job.contains("status") ? job["status"] : json::object();
  st.completed = ParseIndexSet(Str(status, "completedIndexes"), completions);
  st.failed = ParseIndexSet(Str(status, "failedIndexes"), completions);
  if (status.is_object() && status.contains("conditions") && status["conditions"].is_array()) {
    for (const json& c : status["conditions"]) {
      if (Str(c, "status") != "True") continue;
      const std::string type = Str(c, "type");
      if (type == "Complete") st.finished = true;
      if (type == "Failed") {
        st.finished = true;
        st.failed_message = absl::StrCat(Str(c, "reason"), ": ", Str(c, "message"));
      }
    }
  }
  return st;
}

// One sweep run's Jobs, from creation to their end (or their deletion on cancel): one
// Indexed Job whose completion index k trains pending_[k], or, for data-parallel arms
// (replicas_per_arm W > 1), one gang Job of W ranks and its headless Service per arm,
// at most `parallelism` arms at once (k8s_job_spec.h).
class JobRun {
 public:
  JobRun(const K8sClient& client, const K8sArmOptions& options, const ArmPoolSetup& setup,
         const SweepHooks& hooks)
      : client_(client), options_(options), setup_(setup), slots_(*setup.slots), hooks_(hooks) {
    result_.arms.resize(slots_.size());
    result_.errors.resize(slots_.size());
    dir_ = std::filesystem::absolute(setup.dir).lexically_normal().string();
    while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
    experiment_id_ = std::filesystem::path(dir_).filename().string();
    jobs_path_ = absl::StrCat("/apis/batch/v1/namespaces/", client.ns(), "/jobs");
    services_path_ = absl::StrCat("/api/v1/namespaces/", client.ns(), "/services");
    world_ = std::max(1, setup.config->replicas_per_arm);
    device_ = setup_.config->device == "auto" ? options_.arm_device : setup_.config->device;
  }

  ArmPoolResult Run() {
    CollectFinished();
    if (pending_.empty() || Cancelled()) return std::move(result_);
    const int want =
        options_.parallelism > 0 ? options_.parallelism : setup_.config->max_parallel_arms;
    if (world_ == 1) {
      Unit u;
      u.spec = PlainSpec();
      u.arms = pending_;
      u.spec.parallelism = std::clamp(want, 1, u.spec.completions);
      units_.push_back(std::move(u));
      max_active_ = 1;
    } else {
      for (int i : pending_) units_.push_back(Unit{GangSpec(i), {i}});
      max_active_ = std::max(1, want);
    }
    Watch();
    return std::move(result_);
  }

 private:
  struct Unit {
    ArmJobSpec spec;
    std::vector<int> arms;  // completion index k trains arms[k]; a gang: its one arm
    enum { kWaiting, kActive, kDone } state = kWaiting;
    int errors_in_row = 0;
    bool gang() const { return spec.world_size > 1; }
  };

  bool Cancelled() const { return hooks_.Cancelled(); }
  std::string ArmDir(int i) const { return dir_ + "/arms/" + slots_[i].id; }

  // Arms finished on disk (an earlier run) are results now; the rest are pending.
  void CollectFinished() {
    for (size_t i = 0; i < slots_.size(); ++i) {
      auto saved = ArmRunner::LoadState(ArmDir(i));
      if (saved.ok() && saved->state == ArmState::kDone) {
        Finish(i, *std::move(saved));
      } else {
        pending_.push_back(static_cast<int>(i));
      }
    }
  }

  void Finish(int i, ArmResult r) {
    if (!r.backend.empty()) result_.backend_name = r.backend;
    result_.arms[i] = std::move(r);
    if (hooks_.on_arm) hooks_.on_arm(result_.arms[i]);
  }

  ArmJobSpec BaseSpec() const {
    ArmJobSpec s;
    s.ns = client_.ns();
    s.experiment_id = experiment_id_;
    s.image = options_.image;
    s.image_pull_policy = options_.image_pull_policy;
    s.command = {options_.sweep_binary, "--run-arm", "--dir", dir_};
    s.gpu = device_ == "cuda";
    s.node_selector = options_.node_selector;
    s.pvc = options_.pvc;
    s.mount_path = options_.mount_path;
    s.backoff_limit_per_index = options_.backoff_limit_per_index;
    s.ttl_seconds_after_finished = options_.ttl_seconds_after_finished;
    return s;
  }

  ArmJobSpec PlainSpec() const {
    ArmJobSpec s = BaseSpec();
    s.name = ArmJobName(experiment_id_);
    s.command.insert(s.command.end(),
                     {"--arm-indexes", absl::StrJoin(pending_, ","), "--device", device_});
    s.completions = static_cast<int>(pending_.size());
    return s;
  }

  // Arm i's W ranks: `--arm-index i --world-size W`, rank = $JOB_COMPLETION_INDEX.
  ArmJobSpec GangSpec(int i) const {
    ArmJobSpec s = BaseSpec();
    s.name = GangJobName(experiment_id_, slots_[i].id);
    s.service = s.name;
    s.arm_id = slots_[i].id;
    s.world_size = s.completions = s.parallelism = world_;
    s.rendezvous_port = options_.rendezvous_port;
    s.backoff_limit = options_.gang_backoff_limit;
    s.command.insert(s.command.end(), {"--arm-index", std::to_string(i), "--world-size",
                                       std::to_string(world_), "--device", device_});
    return s;
  }

  // POST `body` to `path`; a 409 (left by an earlier run: the coordinator restarted)
  // runs `replace_old` and posts again.
  absl::Status Create(const std::string& path, const std::string& what, const std::string& body,
                      const std::function<absl::Status()>& replace_old) {
    auto created = client_.Request("POST", path, body);
    if (created.ok() && created->status == 409) {
      LogInfo(absl::StrCat("experiment ", experiment_id_, ": ", what,
                           " of an earlier run exists; deleting it before training on"));
      if (absl::Status s = replace_old(); !s.ok()) return s;
      created = client_.Request("POST", path, body);
    }
    if (!created.ok()) return created.status();
    if (created->status != 201 && created->status != 200) {
      return HttpStatus(*created, absl::StrCat("creating ", what));
    }
    return absl::OkStatus();
  }

  // The Service first, so pod 0's DNS record exists when the ranks look it up.
  absl::Status Submit(const Unit& u) {
    const ArmJobSpec& spec = u.spec;
    if (absl::Status s = ValidateArmJobSpec(spec); !s.ok()) return s;
    if (u.gang()) {
      const std::string svc = absl::StrCat("Service ", spec.service);
      absl::Status s = Create(services_path_, svc, BuildGangService(spec).dump(), [&] {
        auto del = DeleteService(spec.service);
        if (del.ok() && del->status != 200 && del->status != 202 && del->status != 404) {
          return HttpStatus(*del, absl::StrCat("deleting the earlier ", svc));
        }
        return del.ok() ? absl::OkStatus() : del.status();
      });
      if (!s.ok()) return s;
    }
    absl::Status s = Create(jobs_path_, absl::StrCat("Job ", spec.name), BuildArmJob(spec).dump(),
                            [&] { return DeleteAndWait(spec.name); });
    if (!s.ok()) {
      if (u.gang()) (void)DeleteService(spec.service);
      return s;
    }
    if (u.gang()) {
      LogInfo(absl::StrCat("experiment ", experiment_id_, ": Job ", client_.ns(), "/", spec.name,
                           " trains arm ", spec.arm_id, " on ", spec.world_size,
                           " pods at once (rendezvous ", GangMasterAddr(spec), ":",
                           spec.rendezvous_port, ")", spec.gpu ? ", one GPU each" : ""));
    } else {
      LogInfo(absl::StrCat("experiment ", experiment_id_, ": Job ", client_.ns(), "/", spec.name,
                           " trains ", spec.completions, " arms, ", spec.parallelism, " at a time",
                           spec.gpu ? ", one GPU each" : ""));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<K8sResponse> Delete(const std::string& name, const char* propagation) {
    const json options = {
        {"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", propagation}};
    return client_.Request("DELETE", jobs_path_ + "/" + name, options.dump());
  }

  absl::StatusOr<K8sResponse> DeleteService(const std::string& name) {
    return client_.Request("DELETE", services_path_ + "/" + name, "");
  }

  // Foreground: the Job object stays until its pods are gone, so its absence means no
  // pod of the earlier run still writes to an arm.
  absl::Status DeleteAndWait(const std::string& name) {
    auto del = Delete(name, "Foreground");
    if (!del.ok()) return del.status();
    if (del->status != 200 && del->status != 202 && del->status != 404) {
      return HttpStatus(*del, absl::StrCat("deleting the earlier Job ", name));
    }
    const auto deadline =
        Clock::now() + std::chrono::duration<double>(options_.delete_wait_seconds);
    while (Clock::now() < deadline) {
      auto got = client_.Request("GET", jobs_path_ + "/" + name, "");
      if (got.ok() && got->status == 404) return absl::OkStatus();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return absl::DeadlineExceededError(absl::StrCat(
        "the earlier Job ", name, " was not gone after ", options_.delete_wait_seconds, " s"));
  }

  // Cancel, or a lost Job: delete it (Background: its pods get SIGTERM) and its Service.
  void Remove(const Unit& u, const char* why) {
    auto del = Delete(u.spec.name, "Background");
    LogInfo(absl::StrCat("experiment ", experiment_id_, ": ", why, "; Job ", u.spec.name,
                         del.ok() ? absl::StrCat(" deleted (HTTP ", del->status, ")")
                                  : absl::StrCat(" not deleted: ", del.status().ToString())));
    if (u.gang()) (void)DeleteService(u.spec.service);
  }

  absl::StatusOr<JobStatus> GetStatus(const Unit& u) {
    const std::string& name = u.spec.name;
    auto got = client_.Request("GET", jobs_path_ + "/" + name, "");
    if (!got.ok()) return got.status();
    if (got->status != 200) return HttpStatus(*got, absl::StrCat("reading Job ", name));
    json job = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
    if (!job.is_object()) return absl::DataLossError(absl::StrCat("Job ", name, ": not JSON"));
    return ParseJobStatus(job, u.spec.completions);
  }

  // Progress from the pending arms' state.json on the shared volume; finished arms.
  void ReadArms() {
    for (int i : pending_) {
      if (!result_.arms[i].arm_id.empty()) continue;
      auto saved = ArmRunner::LoadState(ArmDir(i));
      if (!saved.ok()) continue;
      if (saved->state == ArmState::kDone) {
        Finish(i, *std::move(saved));
        continue;
      }
      if (saved->step == last_step_[i] || !hooks_.on_progress) continue;
      last_step_[i] = saved->step;
      ArmProgress p;
      p.arm_index = i;
      p.arm_id = slots_[i].id;
      p.context = slots_[i].context;
      p.seed = slots_[i].seed;
      p.phase = "train";
      p.fold = saved->evaluated_folds;
      p.folds = saved->folds;
      p.step = saved->step;
      p.total_steps = saved->total_steps;
      p.loss = saved->loss;
      p.peak_memory_bytes = saved->peak_memory_bytes;
      hooks_.on_progress(SweepEvent{p, -1});
    }
  }

  // Sleeps one poll interval; false when a cancel came meanwhile.
  bool SleepPoll() {
    const auto until = Clock::now() + std::chrono::duration<double>(options_.poll_seconds);
    while (Clock::now() < until) {
      if (Cancelled()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return !Cancelled();
  }

  // Starts waiting units while fewer than max_active_ run; one that cannot be created
  // fails its arms.
  void StartUnits() {
    int active = 0;
    for (const Unit& u : units_) active += u.state == Unit::kActive;
    for (Unit& u : units_) {
      if (active >= max_active_ || Cancelled()) return;
      if (u.state != Unit::kWaiting) continue;
      if (absl::Status s = Submit(u); !s.ok()) {
        u.state = Unit::kDone;
        for (int i : u.arms) result_.errors[i] = s;
        continue;
      }
      u.state = Unit::kActive;
      ++active;
    }
  }

  void Watch() {
    for (;;) {
      if (Cancelled()) {
        for (Unit& u : units_) {
          if (u.state == Unit::kActive) Remove(u, "cancelled");
          u.state = Unit::kDone;
        }
        ReadArms();
        return;  // unfinished arms: the engine reads what they saved (cancelled)
      }
      StartUnits();
      bool any_left = false;
      for (Unit& u : units_) {
        if (u.state == Unit::kActive) Poll(u);
        any_left = any_left || u.state != Unit::kDone;
      }
      ReadArms();
      if (!any_left) break;
      SleepPoll();  // a cancel meanwhile: the loop's top deletes the Jobs
    }
    ReadArms();
  }

  // One status read of an active unit; at its end, its arms' results or errors.
  void Poll(Unit& u) {
    absl::StatusOr<JobStatus> st = GetStatus(u);
    if (!st.ok()) {
      if (++u.errors_in_row >= options_.max_poll_errors) {
        Remove(u, "lost");
        u.state = Unit::kDone;
        const absl::Status lost(st.status().code(),
                                absl::StrCat("lost the Job after ", u.errors_in_row,
                                             " failed reads: ", st.status().message()));
        for (int i : u.arms) {
          if (result_.arms[i].arm_id.empty()) result_.errors[i] = lost;
        }
      }
      return;
    }
    u.errors_in_row = 0;
    if (!st->finished) return;
    u.state = Unit::kDone;
    if (u.gang()) (void)DeleteService(u.spec.service);  // the rendezvous is over
    ReadArms();
    const std::string& name = u.spec.name;
    for (size_t k = 0; k < u.arms.size(); ++k) {
      const int i = u.arms[k];
      if (!result_.arms[i].arm_id.empty()) continue;
      std::string why;
      if (u.gang() && !st->failed_message.empty()) {
        why = absl::StrCat("Job ", name, " (", u.spec.world_size, " pods) failed (",
                           st->failed_message, "): ", PodFailure(name, -1));
      } else if (u.gang() ? st->completed.size() == static_cast<size_t>(u.spec.completions)
                          : st->completed.count(static_cast<int>(k)) > 0) {
        why = absl::StrCat("Job ", name, u.gang() ? "" : absl::StrCat(" index ", k),
                           " completed but ", ArmDir(i), "/state.json is not a finished arm");
      } else if (!u.gang() && st->failed.count(static_cast<int>(k)) > 0) {
        why = absl::StrCat("Job ", name, " index ", k,
                           " failed: ", PodFailure(name, static_cast<int>(k)));
      } else {
        why = absl::StrCat("Job ", name, " ended (", st->failed_message, ") before ",
                           u.gang() ? "its arm" : absl::StrCat("index ", k), " finished");
      }
      result_.errors[i] = absl::AbortedError(why);
    }
  }

  // Why Job `name`'s index k last failed (k = -1, a gang: the first rank that failed of
  // its own accord, not one stopped because another failed), from the pod's status
  // (terminated container or eviction); never an error of its own.
  std::string PodFailure(const std::string& name, int k) {
    auto got =
        client_.Request("GET",
                        absl::StrCat("/api/v1/namespaces/", client_.ns(),
                                     "/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D", name),
                        "");
    if (!got.ok() || got->status != 200) return "no pod status readable";
    const json pods = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
    if (!pods.is_object() || !pods.contains("items") || !pods["items"].is_array()) {
      return "no pod status readable";
    }
    std::string why = "its pods are gone";
    bool why_is_a_cause = false;  // a gang: not a rank stopped because another failed
    for (const json& pod : pods["items"]) {
      const json meta = pod.value("metadata", json::object());
      const json notes = meta.value("annotations", json::object());
      if (k >= 0 && Str(notes, "batch.kubernetes.io/job-completion-index") != std::to_string(k)) {
        continue;
      }
      const json status = pod.value("status", json::object());
      if (Str(status, "phase") != "Failed") continue;
      std::string pod_why = absl::StrCat("pod ", Str(meta, "name"));
      if (!Str(status, "reason").empty()) {
        absl::StrAppend(&pod_why, ": ", Str(status, "reason"), " ", Str(status, "message"));
      }
      bool signalled = false;  // SIGTERM / SIGKILL (128 + 15, 128 + 9): stopped from outside
      for (const json& c : status.value("containerStatuses", json::array())) {
        const json t = c.value("state", json::object()).value("terminated", json::object());
        if (t.empty()) continue;
        const int code = t.value("exitCode", -1);
        signalled = signalled || code == 143 || code == 137 || code < -1;
        absl::StrAppend(&pod_why, ": ", Str(t, "reason"), " (exit code ", code, ")");
        if (!Str(t, "message").empty()) absl::StrAppend(&pod_why, ": ", Str(t, "message"));
      }
      if (k >= 0) {
        why = pod_why;  // its last attempt
      } else if (!why_is_a_cause) {
        // A gang's first failed rank that was not stopped by the others' failure.
        why = pod_why;
        why_is_a_cause = !signalled;
      }
    }
    return why;
  }

  const K8sClient& client_;
  const K8sArmOptions& options_;
  const ArmPoolSetup& setup_;
  const std::vector<ArmSlot>& slots_;
  const SweepHooks& hooks_;
  std::string dir_, experiment_id_, jobs_path_, services_path_, device_;
  int world_ = 1;                     // ranks per arm (replicas_per_arm)
  int max_active_ = 1;                // Jobs at once
  std::vector<int> pending_;          // the unfinished arms, by slot
  std::vector<Unit> units_;           // their Jobs
  std::map<int, int64_t> last_step_;  // by slot: the step last reported
  ArmPoolResult result_;
};

}  // namespace

ArmPoolResult K8sArmExecutor::Run(const ArmPoolSetup& setup, const SweepHooks& hooks) {
  return JobRun(*client_, options_, setup, hooks).Run();
}

}  // namespace flashtick
