// The sweep-arm Job's JSON (server/experiments/k8s_job_spec.h): the fields a cluster
// needs to run one arm per pod (Indexed completions, parallelism, per-index backoff,
// TTL), the experiment's labels on Job and pods, the claim at the experiments root,
// the downward-API env the report's "where each arm ran" comes from, a GPU limit and
// toleration exactly when the sweep runs on CUDA, and the name rules of DNS-1123.
#include "server/experiments/k8s_job_spec.h"

#include <gtest/gtest.h>

namespace flashtick {
namespace {

using json = nlohmann::json;

ArmJobSpec Spec(bool gpu) {
  ArmJobSpec s;
  s.name = ArmJobName("exp-000007");
  s.ns = "research";
  s.experiment_id = "exp-000007";
  s.image = "registry.example/flashtick:1.2";
  s.command = {"flashtick_sweep", "--run-arm", "--dir", "/var/lib/flashtick/experiments/exp-000007",
               "--arm-indexes",   "1,3,4"};
  s.completions = 3;
  s.parallelism = 2;
  s.gpu = gpu;
  s.pvc = "flashtick-store";
  s.mount_path = "/var/lib/flashtick";
  s.backoff_limit_per_index = 2;
  s.ttl_seconds_after_finished = 3600;
  return s;
}

TEST(K8sJobSpecTest, IndexedJobOfTheUnfinishedArms) {
  const json job = BuildArmJob(Spec(false));
  EXPECT_EQ(job["apiVersion"], "batch/v1");
  EXPECT_EQ(job["kind"], "Job");
  EXPECT_EQ(job["metadata"]["name"], "flashtick-arms-exp-000007");
  EXPECT_EQ(job["metadata"]["namespace"], "research");
  const json& spec = job["spec"];
  EXPECT_EQ(spec["completionMode"], "Indexed");
  EXPECT_EQ(spec["completions"], 3);
  EXPECT_EQ(spec["parallelism"], 2);
  EXPECT_EQ(spec["backoffLimitPerIndex"], 2);
  EXPECT_EQ(spec["maxFailedIndexes"], 3);
  EXPECT_EQ(spec["ttlSecondsAfterFinished"], 3600);
  EXPECT_EQ(job["metadata"]["labels"]["flashtick.dev/experiment"], "exp-000007");
  EXPECT_EQ(job["metadata"]["labels"]["app.kubernetes.io/component"], "sweep-arm");
  EXPECT_EQ(spec["template"]["metadata"]["labels"], job["metadata"]["labels"]);
  const json& pod = spec["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_EQ(pod["automountServiceAccountToken"], false);
  EXPECT_EQ(pod["securityContext"]["runAsUser"], 10001);
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["image"], "registry.example/flashtick:1.2");
  EXPECT_EQ(c["command"][1], "--run-arm");
  EXPECT_EQ(c["command"][5], "1,3,4");
  EXPECT_EQ(c["env"][0]["name"], "POD_NAME");
  EXPECT_EQ(c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"], "metadata.name");
  EXPECT_EQ(c["env"][1]["name"], "NODE_NAME");
  EXPECT_EQ(c["env"][1]["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName");
  EXPECT_EQ(c["volumeMounts"][0]["name"], "experiments");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/var/lib/flashtick");
  EXPECT_EQ(pod["volumes"][0]["name"], "experiments");
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"], "flashtick-store");
  // A CPU sweep asks no GPU and needs no GPU toleration.
  EXPECT_FALSE(c.contains("resources"));
  EXPECT_FALSE(pod.contains("tolerations"));
}

TEST(K8sJobSpecTest, CudaArmsTakeOneGpuEach) {
  const json job = BuildArmJob(Spec(true));
  const json& pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], 1);
  EXPECT_EQ(pod["tolerations"][0]["key"], "nvidia.com/gpu");
  EXPECT_EQ(pod["tolerations"][0]["operator"], "Exists");
}

TEST(K8sJobSpecTest, NamesAreDnsLabels) {
  EXPECT_EQ(ArmJobName("exp-000001"), "flashtick-arms-exp-000001");
  EXPECT_EQ(ArmJobName("Exp_1.x"), "flashtick-arms-exp-1-x");
  const std::string longest = ArmJobName(std::string(100, 'a') + "-");
  EXPECT_EQ(longest.size(), 63u);
  EXPECT_NE(longest.back(), '-');
  EXPECT_EQ(ArmJobLabels("exp/1!")["flashtick.dev/experiment"], "exp-1");
}

TEST(K8sJobSpecTest, RefusesSpecsThatMakeNoValidJob) {
  EXPECT_TRUE(ValidateArmJobSpec(Spec(false)).ok());
  auto refused = [](auto mutate, const char* why) {
    ArmJobSpec s = Spec(false);
    mutate(s);
    const absl::Status st = ValidateArmJobSpec(s);
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << why;
    EXPECT_NE(st.message().find(why), std::string::npos) << st.message();
  };
  refused([](ArmJobSpec& s) { s.image.clear(); }, "--k8s-image");
  refused([](ArmJobSpec& s) { s.pvc.clear(); }, "--k8s-pvc");
  refused([](ArmJobSpec& s) { s.mount_path = "relative"; }, "absolute");
  refused([](ArmJobSpec& s) { s.completions = 0; }, "completion");
  refused([](ArmJobSpec& s) { s.parallelism = 0; }, "parallelism");
  refused([](ArmJobSpec& s) { s.ns.clear(); }, "namespace");
  refused([](ArmJobSpec& s) { s.command.clear(); }, "command");
}

}  // namespace
}  // namespace flashtick
