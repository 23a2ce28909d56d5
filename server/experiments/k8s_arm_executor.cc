// K8sArmExecutor (see k8s_arm_executor.h).
#include "server/experiments/k8s_arm_executor.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
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

// One sweep run's Job, from creation to its end (or its deletion on cancel).
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
    name_ = ArmJobName(experiment_id_);
    jobs_path_ = absl::StrCat("/apis/batch/v1/namespaces/", client.ns(), "/jobs");
  }

  ArmPoolResult Run() {
    CollectFinished();
    if (pending_.empty() || Cancelled()) return std::move(result_);
    if (absl::Status s = Submit(); !s.ok()) {
      for (int i : pending_) result_.errors[i] = s;
      return std::move(result_);
    }
    Watch();
    return std::move(result_);
  }

 private:
  bool Cancelled() const { return hooks_.cancel != nullptr && hooks_.cancel->load(); }
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

  ArmJobSpec Spec() const {
    ArmJobSpec s;
    s.name = name_;
    s.ns = client_.ns();
    s.experiment_id = experiment_id_;
    s.image = options_.image;
    s.image_pull_policy = options_.image_pull_policy;
    const std::string device =
        setup_.config->device == "auto" ? options_.arm_device : setup_.config->device;
    s.command = {options_.sweep_binary, "--run-arm", "--dir", dir_};
    s.command.insert(s.command.end(),
                     {"--arm-indexes", absl::StrJoin(pending_, ","), "--device", device});
    s.completions = static_cast<int>(pending_.size());
    const int want =
        options_.parallelism > 0 ? options_.parallelism : setup_.config->max_parallel_arms;
    s.parallelism = std::clamp(want, 1, s.completions);
    s.gpu = device == "cuda";
    s.pvc = options_.pvc;
    s.mount_path = options_.mount_path;
    s.backoff_limit_per_index = options_.backoff_limit_per_index;
    s.ttl_seconds_after_finished = options_.ttl_seconds_after_finished;
    return s;
  }

  absl::Status Submit() {
    const ArmJobSpec spec = Spec();
    if (absl::Status s = ValidateArmJobSpec(spec); !s.ok()) return s;
    const std::string body = BuildArmJob(spec).dump();
    auto created = client_.Request("POST", jobs_path_, body);
    if (created.ok() && created->status == 409) {
      LogInfo(absl::StrCat("experiment ", experiment_id_, ": Job ", name_,
                           " of an earlier run exists; deleting it before training on"));
      if (absl::Status s = DeleteAndWait(); !s.ok()) return s;
      created = client_.Request("POST", jobs_path_, body);
    }
    if (!created.ok()) return created.status();
    if (created->status != 201 && created->status != 200) {
      return HttpStatus(*created, absl::StrCat("creating Job ", name_));
    }
    LogInfo(absl::StrCat("experiment ", experiment_id_, ": Job ", client_.ns(), "/", name_,
                         " trains ", spec.completions, " arms, ", spec.parallelism, " at a time",
                         spec.gpu ? ", one GPU each" : ""));
    return absl::OkStatus();
  }

  absl::StatusOr<K8sResponse> Delete(const char* propagation) {
    const json options = {
        {"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", propagation}};
    return client_.Request("DELETE", jobs_path_ + "/" + name_, options.dump());
  }

  // Foreground: the Job object stays until its pods are gone, so its absence means no
  // pod of the earlier run still writes to an arm.
  absl::Status DeleteAndWait() {
    auto del = Delete("Foreground");
    if (!del.ok()) return del.status();
    if (del->status != 200 && del->status != 202 && del->status != 404) {
      return HttpStatus(*del, absl::StrCat("deleting the earlier Job ", name_));
    }
    const auto deadline =
        Clock::now() + std::chrono::duration<double>(options_.delete_wait_seconds);
    while (Clock::now() < deadline) {
      auto got = client_.Request("GET", jobs_path_ + "/" + name_, "");
      if (got.ok() && got->status == 404) return absl::OkStatus();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return absl::DeadlineExceededError(absl::StrCat(
        "the earlier Job ", name_, " was not gone after ", options_.delete_wait_seconds, " s"));
  }

  absl::StatusOr<JobStatus> GetStatus() {
    auto got = client_.Request("GET", jobs_path_ + "/" + name_, "");
    if (!got.ok()) return got.status();
    if (got->status != 200) return HttpStatus(*got, absl::StrCat("reading Job ", name_));
    json job = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
    if (!job.is_object()) return absl::DataLossError(absl::StrCat("Job ", name_, ": not JSON"));
    return ParseJobStatus(job, static_cast<int>(pending_.size()));
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

  void Watch() {
    int errors_in_row = 0;
    JobStatus last;
    for (;;) {
      if (Cancelled()) {
        auto del = Delete("Background");
        LogInfo(absl::StrCat("experiment ", experiment_id_, ": cancelled; Job ", name_,
                             del.ok() ? absl::StrCat(" deleted (HTTP ", del->status, ")")
                                      : absl::StrCat(" not deleted: ", del.status().ToString())));
        ReadArms();
        return;  // unfinished arms: the engine reads what they saved (cancelled)
      }
      absl::StatusOr<JobStatus> st = GetStatus();
      ReadArms();
      if (!st.ok()) {
        if (++errors_in_row >= options_.max_poll_errors) {
          FailUnfinished(absl::Status(st.status().code(),
                                      absl::StrCat("lost the Job after ", errors_in_row,
                                                   " failed reads: ", st.status().message())));
          return;
        }
      } else {
        errors_in_row = 0;
        last = *std::move(st);
        if (last.finished) break;
      }
      if (!SleepPoll()) continue;  // the loop's top deletes the Job
    }
    ReadArms();
    for (size_t k = 0; k < pending_.size(); ++k) {
      const int i = pending_[k];
      if (!result_.arms[i].arm_id.empty()) continue;
      std::string why;
      if (last.failed.count(static_cast<int>(k)) > 0) {
        why =
            absl::StrCat("Job ", name_, " index ", k, " failed: ", PodFailure(static_cast<int>(k)));
      } else if (last.completed.count(static_cast<int>(k)) > 0) {
        why = absl::StrCat("Job ", name_, " index ", k, " completed but ", ArmDir(i),
                           "/state.json is not a finished arm");
      } else {
        why = absl::StrCat("Job ", name_, " ended (", last.failed_message, ") before index ", k,
                           " finished");
      }
      result_.errors[i] = absl::AbortedError(why);
    }
  }

  void FailUnfinished(const absl::Status& s) {
    (void)Delete("Background");
    for (int i : pending_) {
      if (result_.arms[i].arm_id.empty()) result_.errors[i] = s;
    }
  }

  // Why index k's last pod failed, from the pod's status (terminated container or
  // eviction), or "" unknown; never an error of its own.
  std::string PodFailure(int k) {
    auto got = client_.Request(
        "GET",
        absl::StrCat("/api/v1/namespaces/", client_.ns(),
                     "/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D", name_),
        "");
    if (!got.ok() || got->status != 200) return "no pod status readable";
    const json pods = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
    if (!pods.is_object() || !pods.contains("items") || !pods["items"].is_array()) {
      return "no pod status readable";
    }
    std::string why = "its pods are gone";
    for (const json& pod : pods["items"]) {
      const json meta = pod.value("metadata", json::object());
      const json notes = meta.value("annotations", json::object());
      if (Str(notes, "batch.kubernetes.io/job-completion-index") != std::to_string(k)) continue;
      const json status = pod.value("status", json::object());
      if (Str(status, "phase") != "Failed") continue;
      why = absl::StrCat("pod ", Str(meta, "name"));
      if (!Str(status, "reason").empty()) {
        absl::StrAppend(&why, ": ", Str(status, "reason"), " ", Str(status, "message"));
      }
      for (const json& c : status.value("containerStatuses", json::array())) {
        const json t = c.value("state", json::object()).value("terminated", json::object());
        if (t.empty()) continue;
        absl::StrAppend(&why, ": ", Str(t, "reason"), " (exit code ", t.value("exitCode", -1), ")");
        if (!Str(t, "message").empty()) absl::StrAppend(&why, ": ", Str(t, "message"));
      }
    }
    return why;
  }

  const K8sClient& client_;
  const K8sArmOptions& options_;
  const ArmPoolSetup& setup_;
  const std::vector<ArmSlot>& slots_;
  const SweepHooks& hooks_;
  std::string dir_, experiment_id_, name_, jobs_path_;
  std::vector<int> pending_;          // completion index k trains slot pending_[k]
  std::map<int, int64_t> last_step_;  // by slot: the step last reported
  ArmPoolResult result_;
};

}  // namespace

ArmPoolResult K8sArmExecutor::Run(const ArmPoolSetup& setup, const SweepHooks& hooks) {
  return JobRun(*client_, options_, setup, hooks).Run();
}

}  // namespace flashtick
