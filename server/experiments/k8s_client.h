// K8sClient: the few Kubernetes REST API calls the Kubernetes arm executor makes
// (k8s_arm_executor.h), over libcurl. In a pod it uses the in-cluster configuration
// (https://kubernetes.io/docs/tasks/run-application/access-api-from-pod/): the API
// server at https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the service
// account's bearer token and CA bundle and the pod's namespace under
// /var/run/secrets/kubernetes.io/serviceaccount/; every part can be overridden
// (flashtickd --k8s-*, docs/deploy.md), so tests point it at a fake API server over
// plain http. The token file is read on every request: kubelet rotates projected
// service-account tokens in place. Every request has a deadline and every response a
// size limit; a larger one fails RESOURCE_EXHAUSTED instead of growing memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flashtick {

inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

struct K8sClientOptions {
  std::string api_server;  // "" = https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
  std::string token_file = std::string(kServiceAccountDir) + "/token";  // "" = no token
  std::string ca_file = std::string(kServiceAccountDir) + "/ca.crt";    // "" = system CAs
  std::string ns;  // "" = the contents of namespace_file
  std::string namespace_file = std::string(kServiceAccountDir) + "/namespace";
  double request_timeout_seconds = 30;
  int64_t max_response_bytes = 8 << 20;
};

struct K8sResponse {
  long status = 0;  // HTTP status
  std::string body;
};

class K8sClient {
 public:
  // Resolves the API server and namespace (INVALID_ARGUMENT / FAILED_PRECONDITION
  // naming what is missing, e.g. outside a cluster without --k8s-api-server).
  static absl::StatusOr<std::unique_ptr<K8sClient>> Create(K8sClientOptions options);

  // One request: `path` below the API server ("/apis/batch/v1/..."), `body` JSON or "".
  // Any HTTP status is returned as a response; a transport error, a timeout or an
  // unreadable token is an error status.
  absl::StatusOr<K8sResponse> Request(absl::string_view method, const std::string& path,
                                      const std::string& body) const;

  const std::string& ns() const { return options_.ns; }
  const std::string& api_server() const { return options_.api_server; }

 private:
  explicit K8sClient(K8sClientOptions options) : options_(std::move(options)) {}
  K8sClientOptions options_;
};

}  // namespace flashtick
