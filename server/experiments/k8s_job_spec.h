// The Kubernetes Job that trains a sweep's unfinished arms (k8s_arm_executor.h): an
// Indexed Job (https://kubernetes.io/docs/concepts/workloads/controllers/job/,
// "Completion mode") whose pod k runs `flashtick_sweep --run-arm` on arm k of the
// list in its command, with the experiments volume (a ReadWriteMany claim) mounted
// where the coordinator has it, so the arm writes <dir>/arms/<arm_id>/ where the
// coordinator's resume reads it. One GPU per pod when the sweep runs on CUDA; the pod
// and node names reach the arm through the downward API (POD_NAME, NODE_NAME) for the
// report; a failing index is retried backoff_limit_per_index times on its own.
//
// A data-parallel arm (the sweep's replicas_per_arm W > 1; docs/deploy.md, "Multi-pod
// arms") is a gang instead, the pattern of the Kubeflow training operator: one Indexed
// Job per arm with completions = parallelism = W, pod k being rank k
// ($JOB_COMPLETION_INDEX), and a headless Service (clusterIP None) named in the pods'
// `subdomain`, so pod 0 resolves as <job>-0.<service>.<ns>.svc
// (https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/, "A/AAAA
// records" of pods with hostname and subdomain; an Indexed Job's pod k has hostname
// <job>-k). That name and the rendezvous port reach every rank as MASTER_ADDR and
// MASTER_PORT, and WORLD_SIZE = W. The ranks train in lock step, so a retried pod could
// not rejoin its group: the Job's backoffLimit (default 0) fails the whole arm, and the
// next run of the experiment resumes it from its checkpoint.
// Pure JSON building, tested in tests/experiments/k8s_job_spec_test.cc.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"

namespace flashtick {

struct ArmJobSpec {
  std::string name;  // ArmJobName(experiment_id); a gang: GangJobName(experiment_id, arm_id)
  std::string ns;
  std::string experiment_id;  // label flashtick.dev/experiment
  std::string image;
  std::string image_pull_policy = "IfNotPresent";
  std::vector<std::string> command;  // the container's command, arguments included
  int completions = 1;               // arms to train
  int parallelism = 1;               // pods at once
  bool gpu = false;                  // resources.limits["nvidia.com/gpu"] = 1
  // The pods' nodeSelector (e.g. nvidia.com/gpu.product → NVIDIA-A100-SXM4-80GB, the
  // label NVIDIA's GPU feature discovery puts on GPU nodes): which GPU model arms get.
  std::vector<std::pair<std::string, std::string>> node_selector;
  std::string pvc;                   // the experiments claim
  std::string mount_path;            // where the claim is mounted (same as the coordinator's)
  int backoff_limit_per_index = 1;
  int ttl_seconds_after_finished = 86400;
  int run_as_user = 10001;  // the image's USER (Dockerfile)
  // A gang (world_size > 1): completions = parallelism = world_size, all for one arm.
  int world_size = 1;
  std::string arm_id;           // label flashtick.dev/arm
  std::string service;          // the headless Service: the pods' subdomain
  int rendezvous_port = 29500;  // MASTER_PORT: rank 0's TCP store
  int backoff_limit = 0;        // failed pods before the gang's Job fails
};

// A gang's rendezvous address: "<name>-0.<service>.<ns>.svc", pod 0's DNS name.
std::string GangMasterAddr(const ArmJobSpec& spec);

// The labels of the Job and its pods.
nlohmann::json ArmJobLabels(const std::string& experiment_id);
// "flashtick-arms-<id>", lower-cased, non-alphanumerics as '-', at most 63 characters
// (a DNS-1123 label: the Job's name also names its pods).
std::string ArmJobName(const std::string& experiment_id);
// A gang's Job (and Service) name: "flashtick-arm-<id>-<arm_id>", a DNS-1035 label of at
// most kMaxGangJobName characters, so its pods' hostnames <name>-<rank> (rank < 100)
// stay DNS labels; a longer one is cut and ends in a hash of the whole, to stay unique.
inline constexpr size_t kMaxGangJobName = 60;
std::string GangJobName(const std::string& experiment_id, const std::string& arm_id);
// INVALID_ARGUMENT naming the field that cannot make a valid Job.
absl::Status ValidateArmJobSpec(const ArmJobSpec& spec);
// The batch/v1 Job object for POST /apis/batch/v1/namespaces/<ns>/jobs.
nlohmann::json BuildArmJob(const ArmJobSpec& spec);
// A gang's headless Service for POST /api/v1/namespaces/<ns>/services: clusterIP None,
// selecting the Job's pods, the rendezvous port, and publishNotReadyAddresses so a
// rank finds rank 0's record as soon as that pod has an address, before readiness.
nlohmann::json BuildGangService(const ArmJobSpec& spec);

}  // namespace flashtick
