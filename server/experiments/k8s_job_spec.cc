// The sweep-arm Job (see k8s_job_spec.h).
#include "server/experiments/k8s_job_spec.h"

#include <cctype>
#include <cstdint>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace flashtick {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxLabel = 63;  // DNS-1123 label and label value length

// A label value: alphanumerics, '-', '_', '.', starting and ending alphanumeric.
std::string LabelValue(const std::string& s) {
  std::string v;
  for (char c : s) {
    v += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '-';
  }
  if (v.size() > kMaxLabel) v.resize(kMaxLabel);
  while (!v.empty() && !std::isalnum(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && !std::isalnum(static_cast<unsigned char>(v.front()))) v.erase(0, 1);
  return v;
}

// Lower-case alphanumerics, anything else '-'.
std::string DnsChars(const std::string& s) {
  std::string out;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
  }
  return out;
}

// FNV-1a, 32 bits (a stable hash: names must not change between coordinator builds).
uint32_t Fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

json GangLabels(const ArmJobSpec& s) {
  json labels = ArmJobLabels(s.experiment_id);
  labels["flashtick.dev/arm"] = LabelValue(s.arm_id);
  labels["flashtick.dev/arm-job"] = s.name;  // the Service's selector
  return labels;
}

}  // namespace

json ArmJobLabels(const std::string& experiment_id) {
  return {{"app.kubernetes.io/name", "flashtick"},
          {"app.kubernetes.io/component", "sweep-arm"},
          {"app.kubernetes.io/managed-by", "flashtickd"},
          {"flashtick.dev/experiment", LabelValue(experiment_id)}};
}

std::string ArmJobName(const std::string& experiment_id) {
  std::string name = "flashtick-arms-" + DnsChars(experiment_id);
  if (name.size() > kMaxLabel) name.resize(kMaxLabel);
  while (name.back() == '-') name.pop_back();
  return name;
}

std::string GangJobName(const std::string& experiment_id, const std::string& arm_id) {
  std::string name = absl::StrCat("flashtick-arm-", DnsChars(experiment_id), "-", DnsChars(arm_id));
  while (name.back() == '-') name.pop_back();
  if (name.size() <= kMaxGangJobName) return name;
  char hash[10];
  std::snprintf(hash, sizeof(hash), "-%08x", Fnv1a(name));
  name.resize(kMaxGangJobName - 9);
  while (name.back() == '-') name.pop_back();
  return name + hash;
}

std::string GangMasterAddr(const ArmJobSpec& s) {
  return absl::StrCat(s.name, "-0.", s.service, ".", s.ns, ".svc");
}

absl::Status ValidateArmJobSpec(const ArmJobSpec& s) {
  auto bad = [](const std::string& why) { return absl::InvalidArgumentError(why); };
  if (s.name.empty() || s.name.size() > kMaxLabel) return bad("the Job name must be 1..63 chars");
  if (s.ns.empty()) return bad("the Job needs a namespace");
  if (s.image.empty()) return bad("the Job needs an image (--k8s-image)");
  if (s.pvc.empty()) return bad("the Job needs the experiments claim (--k8s-pvc)");
  if (s.mount_path.empty() || s.mount_path.front() != '/') {
    return bad("the claim's mount path must be absolute (--k8s-pvc-mount-path)");
  }
  if (s.command.empty()) return bad("the Job needs a command");
  if (s.completions < 1) return bad("the Job needs at least one completion");
  if (s.parallelism < 1) return bad("the Job's parallelism must be ≥ 1");
  if (s.backoff_limit_per_index < 0) return bad("backoffLimitPerIndex must be ≥ 0");
  if (s.ttl_seconds_after_finished < 0) return bad("ttlSecondsAfterFinished must be ≥ 0");
  if (s.world_size < 1 || s.world_size > 100) return bad("the world size must be 1..100");
  if (s.world_size == 1) return absl::OkStatus();
  if (s.name.size() > kMaxGangJobName) {
    return bad("a multi-pod arm's Job name must be at most 60 chars (pod hostnames)");
  }
  if (s.completions != s.world_size || s.parallelism != s.world_size) {
    return bad("a multi-pod arm's Job needs completions = parallelism = the world size");
  }
  if (s.service.empty() || s.service.size() > kMaxLabel ||
      !std::isalpha(static_cast<unsigned char>(s.service.front()))) {
    return bad("a multi-pod arm needs a headless Service name (a DNS-1035 label)");
  }
  if (s.rendezvous_port < 1 || s.rendezvous_port > 65535) {
    return bad("the rendezvous port must be 1..65535 (--k8s-rendezvous-port)");
  }
  if (s.backoff_limit < 0) return bad("backoffLimit must be ≥ 0");
  return absl::OkStatus();
}

json BuildArmJob(const ArmJobSpec& s) {
  const bool gang = s.world_size > 1;
  const json labels = gang ? GangLabels(s) : ArmJobLabels(s.experiment_id);
  auto field_env = [](const char* name, const char* path) {
    return json{{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", path}}}}}};
  };
  json container = {
      {"name", "arm"},
      {"image", s.image},
      {"imagePullPolicy", s.image_pull_policy},
      {"command", s.command},
      {"env", json::array({field_env("POD_NAME", "metadata.name"),
                           field_env("NODE_NAME", "spec.nodeName")})},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", json::array({"ALL"})}}}}},
      {"volumeMounts", json::array({{{"name", "experiments"}, {"mountPath", s.mount_path}},
                                    {{"name", "tmp"}, {"mountPath", "/tmp"}}})}};
  json pod = {
      {"restartPolicy", "Never"},               // backoffLimitPerIndex requires it
      {"automountServiceAccountToken", false},  // an arm never calls the API
      {"terminationGracePeriodSeconds", 60},    // time to write a final checkpoint
      {"securityContext",
       {{"runAsNonRoot", true},
        {"runAsUser", s.run_as_user},
        {"runAsGroup", s.run_as_user},
        {"fsGroup", s.run_as_user},
        {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
      {"volumes",
       json::array({{{"name", "experiments"}, {"persistentVolumeClaim", {{"claimName", s.pvc}}}},
                    {{"name", "tmp"}, {"emptyDir", json::object()}}})}};
  if (!s.node_selector.empty()) {
    json selector = json::object();
    for (const auto& [key, value] : s.node_selector) selector[key] = value;
    pod["nodeSelector"] = selector;
  }
  if (s.gpu) {
    container["resources"] = {{"limits", {{"nvidia.com/gpu", 1}}}};
    pod["tolerations"] = json::array(
        {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  }
  if (gang) {
    auto value_env = [](const char* name, const std::string& value) {
      return json{{"name", name}, {"value", value}};
    };
    container["env"].push_back(value_env("MASTER_ADDR", GangMasterAddr(s)));
    container["env"].push_back(value_env("MASTER_PORT", std::to_string(s.rendezvous_port)));
    container["env"].push_back(value_env("WORLD_SIZE", std::to_string(s.world_size)));
    container["ports"] = json::array(
        {{{"name", "rendezvous"}, {"containerPort", s.rendezvous_port}, {"protocol", "TCP"}}});
    pod["subdomain"] = s.service;
  }
  pod["containers"] = json::array({container});
  if (gang) {
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", s.name}, {"namespace", s.ns}, {"labels", labels}}},
            {"spec",
             {{"completionMode", "Indexed"},
              {"completions", s.world_size},
              {"parallelism", s.world_size},  // the ranks start together
              {"backoffLimit", s.backoff_limit},
              {"ttlSecondsAfterFinished", s.ttl_seconds_after_finished},
              {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod}}}}}};
  }
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", s.name}, {"namespace", s.ns}, {"labels", labels}}},
          {"spec",
           {{"completionMode", "Indexed"},
            {"completions", s.completions},
            {"parallelism", s.parallelism},
            {"backoffLimitPerIndex", s.backoff_limit_per_index},
            {"maxFailedIndexes", s.completions},  // one arm's failure stops no other
            {"ttlSecondsAfterFinished", s.ttl_seconds_after_finished},
            {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod}}}}}};
}

json BuildGangService(const ArmJobSpec& s) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"name", s.service}, {"namespace", s.ns}, {"labels", GangLabels(s)}}},
          {"spec",
           {{"clusterIP", "None"},
            {"publishNotReadyAddresses", true},
            {"selector", {{"flashtick.dev/arm-job", s.name}}},
            {"ports", json::array({{{"name", "rendezvous"},
                                    {"port", s.rendezvous_port},
                                    {"targetPort", s.rendezvous_port},
                                    {"protocol", "TCP"}}})}}}};
}

}  // namespace flashtick
