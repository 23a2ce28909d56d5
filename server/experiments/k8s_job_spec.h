// The Kubernetes Job that trains a sweep's unfinished arms (k8s_arm_executor.h): an
// Indexed Job (https://kubernetes.io/docs/concepts/workloads/controllers/job/,
// "Completion mode") whose pod k runs `flashtick_sweep --run-arm` on arm k of the
// list in its command, with the experiments volume (a ReadWriteMany claim) mounted
// where the coordinator has it, so the arm writes <dir>/arms/<arm_id>/ where the
// coordinator's resume reads it. One GPU per pod when the sweep runs on CUDA; the pod
// and node names reach the arm through the downward API (POD_NAME, NODE_NAME) for the
// report; a failing index is retried backoff_limit_per_index times on its own.
// Pure JSON building, tested in tests/experiments/k8s_job_spec_test.cc.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"

namespace flashtick {

struct ArmJobSpec {
  std::string name;  // ArmJobName(experiment_id)
  std::string ns;
  std::string experiment_id;  // label flashtick.dev/experiment
  std::string image;
  std::string image_pull_policy = "IfNotPresent";
  std::vector<std::string> command;  // the container's command, arguments included
  int completions = 1;               // arms to train
  int parallelism = 1;               // pods at once
  bool gpu = false;                  // resources.limits["nvidia.com/gpu"] = 1
  std::string pvc;                   // the experiments claim
  std::string mount_path;            // where the claim is mounted (same as the coordinator's)
  int backoff_limit_per_index = 1;
  int ttl_seconds_after_finished = 86400;
  int run_as_user = 10001;  // the image's USER (Dockerfile)
};

// The labels of the Job and its pods.
nlohmann::json ArmJobLabels(const std::string& experiment_id);
// "flashtick-arms-<id>", lower-cased, non-alphanumerics as '-', at most 63 characters
// (a DNS-1123 label: the Job's name also names its pods).
std::string ArmJobName(const std::string& experiment_id);
// INVALID_ARGUMENT naming the field that cannot make a valid Job.
absl::Status ValidateArmJobSpec(const ArmJobSpec& spec);
// The batch/v1 Job object for POST /apis/batch/v1/namespaces/<ns>/jobs.
nlohmann::json BuildArmJob(const ArmJobSpec& spec);

}  // namespace flashtick
