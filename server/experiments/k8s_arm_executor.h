// K8sArmExecutor: flashtickd --sweep-arm-runner=kubernetes (docs/deploy.md, "Sweep arms
// as Kubernetes Jobs"). Instead of training a sweep's arms in threads, the coordinator
// creates one Indexed Job per experiment run (k8s_job_spec.h) whose pods each train one
// unfinished arm with `flashtick_sweep --run-arm` on the shared experiments volume, and
// polls the Job and the arms' state.json files there to publish progress; the engine
// then concludes from the arms on disk exactly as after a local run (arm_executor.h).
// Arms already finished on disk are reused, not resubmitted. A failed index fails its
// arm with the reason from the pod (or the Job) status. Cancel, and a shutdown, delete
// the Job (propagationPolicy Background): the pods get SIGTERM and stop at a
// checkpoint, from which a later run resumes. A Job of the same name left by an earlier
// run of the experiment (the coordinator restarted) is deleted and waited for first,
// so two pods never train one arm.
//
// A sweep whose replicas_per_arm W > 1 trains each arm data-parallel over W pods
// instead (docs/deploy.md, "Multi-pod arms"): one Indexed Job per arm with W pods that
// start together, `--arm-index K --world-size W`, and a headless Service through which
// the ranks find rank 0 (k8s_job_spec.h); at most --k8s-parallelism arms (0: the
// config's max_parallel_arms) at once, the next arm's Job created when one ends. A
// failed pod fails its arm's Job; the Service is deleted when the Job ends, and cancel
// deletes the running arms' Jobs and Services.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "research/sweep/arm_executor.h"
#include "server/experiments/k8s_client.h"

namespace flashtick {

struct K8sArmOptions {
  std::string image;  // --k8s-image
  std::string image_pull_policy = "IfNotPresent";
  std::string pvc;                               // --k8s-pvc: the experiments claim
  std::string mount_path;                        // --k8s-pvc-mount-path
  std::string sweep_binary = "flashtick_sweep";  // --k8s-sweep-binary, in the image
  // The device of a sweep whose config says "auto" (the pods', not the coordinator's
  // --device, which may be cpu on a node without a GPU); cuda asks one GPU per pod.
  std::string arm_device = "cuda";
  // The arm pods' nodeSelector (--k8s-node-selector KEY=VALUE), e.g. one GPU model.
  std::vector<std::pair<std::string, std::string>> node_selector;
  int parallelism = 0;  // pods (multi-pod arms: arms) at once; 0: max_parallel_arms
  int backoff_limit_per_index = 1;
  int rendezvous_port = 29500;  // --k8s-rendezvous-port: a multi-pod arm's MASTER_PORT
  int gang_backoff_limit = 0;   // failed pods before a multi-pod arm's Job fails
  int ttl_seconds_after_finished = 86400;
  double poll_seconds = 5;           // Job status and state.json reads
  double delete_wait_seconds = 300;  // for an earlier run's Job to be gone
  int max_poll_errors = 12;          // consecutive failed status reads, then fail
};

class K8sArmExecutor : public ArmExecutor {
 public:
  // `client` outlives the executor.
  K8sArmExecutor(const K8sClient* client, K8sArmOptions options)
      : client_(client), options_(std::move(options)) {}

  ArmPoolResult Run(const ArmPoolSetup& setup, const SweepHooks& hooks) override;

 private:
  const K8sClient* client_;
  const K8sArmOptions options_;
};

}  // namespace flashtick
