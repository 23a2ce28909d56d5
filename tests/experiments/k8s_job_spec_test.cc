// The sweep-arm Job's JSON (server/experiments/k8s_job_spec.h): the fields a cluster
// needs to run one arm per pod (Indexed completions, parallelism, per-index backoff,
// TTL), the experiment's labels on Job and pods, the claim at the experiments root,
// the downward-API env the report's "where each arm ran" comes from, a GPU limit and
// toleration exactly when the sweep runs on CUDA, and the name rules of DNS-1123; and
// a multi-pod arm's gang (docs/deploy.md, "Multi-pod arms"): its Job (completions =
// parallelism = W, one arm, rendezvous env naming pod 0 through the headless Service)
// and that Service.
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

TEST(K8sJobSpecTest, NodeSelectorPinsTheGpuModel) {
  ArmJobSpec spec = Spec(true);
  EXPECT_FALSE(BuildArmJob(spec)["spec"]["template"]["spec"].contains("nodeSelector"));
  spec.node_selector = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}, {"pool", "train"}};
  const json selector = BuildArmJob(spec)["spec"]["template"]["spec"]["nodeSelector"];
  EXPECT_EQ(selector, (json{{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                            {"pool", "train"}}));
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

ArmJobSpec Gang(bool gpu) {
  ArmJobSpec s = Spec(gpu);
  s.name = GangJobName("exp-000007", "n32-s2");
  s.service = s.name;
  s.arm_id = "n32-s2";
  s.world_size = 4;
  s.completions = s.parallelism = 4;
  s.rendezvous_port = 29511;
  s.command = {
      "flashtick_sweep", "--run-arm", "--dir",        "/var/lib/flashtick/experiments/exp-000007",
      "--arm-index",     "3",         "--world-size", "4"};
  return s;
}

std::string Env(const json& container, const std::string& name) {
  for (const json& e : container["env"]) {
    if (e["name"] == name) return e.contains("value") ? e["value"].get<std::string>() : "<ref>";
  }
  return "";
}

TEST(K8sJobSpecTest, MultiPodArmIsAGangJob) {
  const ArmJobSpec s = Gang(true);
  ASSERT_TRUE(ValidateArmJobSpec(s).ok()) << ValidateArmJobSpec(s);
  const json job = BuildArmJob(s);
  EXPECT_EQ(job["metadata"]["name"], "flashtick-arm-exp-000007-n32-s2");
  const json& spec = job["spec"];
  EXPECT_EQ(spec["completionMode"], "Indexed");
  EXPECT_EQ(spec["completions"], 4);
  EXPECT_EQ(spec["parallelism"], 4);
  // One failed rank fails the arm: no per-index retry, whose pod could not rejoin.
  EXPECT_EQ(spec["backoffLimit"], 0);
  EXPECT_FALSE(spec.contains("backoffLimitPerIndex"));
  EXPECT_FALSE(spec.contains("maxFailedIndexes"));
  EXPECT_EQ(spec["ttlSecondsAfterFinished"], 3600);
  const json& labels = job["metadata"]["labels"];
  EXPECT_EQ(labels["flashtick.dev/experiment"], "exp-000007");
  EXPECT_EQ(labels["flashtick.dev/arm"], "n32-s2");
  EXPECT_EQ(labels["flashtick.dev/arm-job"], "flashtick-arm-exp-000007-n32-s2");
  EXPECT_EQ(spec["template"]["metadata"]["labels"], labels);
  const json& pod = spec["template"]["spec"];
  EXPECT_EQ(pod["subdomain"], "flashtick-arm-exp-000007-n32-s2");
  EXPECT_EQ(pod["restartPolicy"], "Never");
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["command"][5], "3");
  EXPECT_EQ(c["command"][7], "4");
  EXPECT_EQ(Env(c, "MASTER_ADDR"),
            "flashtick-arm-exp-000007-n32-s2-0.flashtick-arm-exp-000007-n32-s2.research.svc");
  EXPECT_EQ(Env(c, "MASTER_PORT"), "29511");
  EXPECT_EQ(Env(c, "WORLD_SIZE"), "4");
  EXPECT_EQ(Env(c, "POD_NAME"), "<ref>");
  EXPECT_EQ(c["ports"][0]["containerPort"], 29511);
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], 1);  // one GPU per rank
  EXPECT_EQ(pod["tolerations"][0]["key"], "nvidia.com/gpu");
  EXPECT_FALSE(
      BuildArmJob(Gang(false))["spec"]["template"]["spec"]["containers"][0].contains("resources"));
  // A one-pod arm's Job has none of it.
  const json plain = BuildArmJob(Spec(false));
  EXPECT_FALSE(plain["spec"]["template"]["spec"].contains("subdomain"));
  EXPECT_EQ(Env(plain["spec"]["template"]["spec"]["containers"][0], "MASTER_ADDR"), "");
}

TEST(K8sJobSpecTest, GangServiceIsHeadlessAndSelectsTheJobsPods) {
  const ArmJobSpec s = Gang(false);
  const json svc = BuildGangService(s);
  EXPECT_EQ(svc["apiVersion"], "v1");
  EXPECT_EQ(svc["kind"], "Service");
  EXPECT_EQ(svc["metadata"]["name"], "flashtick-arm-exp-000007-n32-s2");
  EXPECT_EQ(svc["metadata"]["namespace"], "research");
  EXPECT_EQ(svc["metadata"]["labels"]["flashtick.dev/experiment"], "exp-000007");
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(svc["spec"]["ports"][0]["port"], 29511);
  EXPECT_EQ(svc["spec"]["ports"][0]["protocol"], "TCP");
  // The selector matches the labels of the Job's pods, and only those.
  const json pod_labels = BuildArmJob(s)["spec"]["template"]["metadata"]["labels"];
  ASSERT_EQ(svc["spec"]["selector"].size(), 1u);
  for (const auto& [k, v] : svc["spec"]["selector"].items()) EXPECT_EQ(pod_labels[k], v) << k;
  EXPECT_EQ(GangMasterAddr(s), std::string(BuildArmJob(s)["metadata"]["name"]) + "-0." +
                                   std::string(svc["metadata"]["name"]) + ".research.svc");
}

TEST(K8sJobSpecTest, GangNamesLeaveRoomForTheRank) {
  EXPECT_EQ(GangJobName("exp-000001", "n8-s1"), "flashtick-arm-exp-000001-n8-s1");
  EXPECT_EQ(GangJobName("Exp_1", "N8.s1_"), "flashtick-arm-exp-1-n8-s1");
  const std::string a = GangJobName("exp-000001", std::string(80, 'a') + "1");
  const std::string b = GangJobName("exp-000001", std::string(80, 'a') + "2");
  EXPECT_LE(a.size(), kMaxGangJobName);
  EXPECT_NE(a, b);  // cut names stay apart by their hash
  EXPECT_EQ(a, GangJobName("exp-000001", std::string(80, 'a') + "1"));  // and are stable
}

TEST(K8sJobSpecTest, RefusesGangsThatCannotRendezvous) {
  EXPECT_TRUE(ValidateArmJobSpec(Gang(false)).ok());
  auto refused = [](auto mutate, const char* why) {
    ArmJobSpec s = Gang(false);
    mutate(s);
    const absl::Status st = ValidateArmJobSpec(s);
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << why;
    EXPECT_NE(st.message().find(why), std::string::npos) << st.message();
  };
  refused([](ArmJobSpec& s) { s.parallelism = 2; }, "completions = parallelism");
  refused([](ArmJobSpec& s) { s.completions = 3; }, "completions = parallelism");
  refused([](ArmJobSpec& s) { s.service.clear(); }, "headless Service");
  refused([](ArmJobSpec& s) { s.service = "9lives"; }, "DNS-1035");
  refused([](ArmJobSpec& s) { s.rendezvous_port = 0; }, "--k8s-rendezvous-port");
  refused([](ArmJobSpec& s) { s.name = std::string(61, 'a'); }, "at most 60");
  refused([](ArmJobSpec& s) { s.backoff_limit = -1; }, "backoffLimit");
}

}  // namespace
}  // namespace flashtick
