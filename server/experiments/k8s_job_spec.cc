// The sweep-arm Job (see k8s_job_spec.h).
#include "server/experiments/k8s_job_spec.h"

#include <cctype>

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

}  // namespace

json ArmJobLabels(const std::string& experiment_id) {
  return {{"app.kubernetes.io/name", "flashtick"},
          {"app.kubernetes.io/component", "sweep-arm"},
          {"app.kubernetes.io/managed-by", "flashtickd"},
          {"flashtick.dev/experiment", LabelValue(experiment_id)}};
}

std::string ArmJobName(const std::string& experiment_id) {
  std::string name = "flashtick-arms-";
  for (char c : experiment_id) {
    const unsigned char u = static_cast<unsigned char>(c);
    name += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
  }
  if (name.size() > kMaxLabel) name.resize(kMaxLabel);
  while (name.back() == '-') name.pop_back();
  return name;
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
  return absl::OkStatus();
}

json BuildArmJob(const ArmJobSpec& s) {
  const json labels = ArmJobLabels(s.experiment_id);
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
  if (s.gpu) {
    container["resources"] = {{"limits", {{"nvidia.com/gpu", 1}}}};
    pod["tolerations"] = json::array(
        {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  }
  pod["containers"] = json::array({container});
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

}  // namespace flashtick
