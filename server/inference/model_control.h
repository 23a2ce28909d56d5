// ModelControl: Triton's model repository control behind RepositoryModelLoad and
// RepositoryModelUnload. It changes the ModelRepository (which serialises the
// changes and publishes each as a new snapshot) and keeps the per-version
// flashtick_model_info series and flashtick_model_loads_total in step with it.
// Requests in flight and open tick streams hold their entries (ModelEntryPtr), so
// they finish on the version they started with.
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "inference/grpc_service.pb.h"
#include "server/metrics/metrics.h"
#include "server/model_repository.h"

namespace flashtick {

class ModelControl {
 public:
  // Neither owned.
  ModelControl(ModelRepository* repository, Metrics* metrics)
      : repository_(repository), metrics_(metrics) {}

  // Triton semantics: loading a loaded model reloads it (its versions replaced at
  // once); repository_name and parameters are ignored (one repository here, and
  // no config overrides: what is on disk is what loads).
  absl::Status Load(const inference::RepositoryModelLoadRequest& request);
  // repository_name and parameters (Triton's unload_dependents) are ignored.
  absl::Status Unload(const inference::RepositoryModelUnloadRequest& request);
  // A new version of `name` written by `write` and loaded (ModelRepository::AddVersion),
  // counted in flashtick_model_loads_total like a RepositoryModelLoad (sweep promotion).
  absl::StatusOr<AddedVersion> AddVersion(
      const std::string& name, const std::function<absl::Status(const std::string& dir)>& write);

 private:
  void Publish(const ModelSwap& swap);

  ModelRepository* repository_;
  Metrics* metrics_;
  // Held across a change and its metrics, so that two changes of one model cannot
  // leave the info series of the loser behind.
  std::mutex mu_;
};

}  // namespace flashtick
