// RepositoryModelLoad / Unload (see model_control.h).
#include "server/inference/model_control.h"

#include "absl/strings/str_cat.h"
#include "server/logging.h"
#include "server/status_convert.h"

namespace flashtick {

void ModelControl::Publish(const ModelSwap& swap) {
  for (const ModelEntryPtr& entry : swap.removed) {
    metrics_->RemoveModelInfo(entry->name, entry->version_string(), entry->kernel_path,
                              entry->device);
  }
  for (const ModelEntryPtr& entry : swap.added) {
    if (!entry->unavailable_reason.empty()) continue;  // refused: not served, as at startup
    metrics_->SetModelInfo(entry->name, entry->version_string(), entry->kernel_path,
                           entry->device);
  }
}

absl::Status ModelControl::Load(const inference::RepositoryModelLoadRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& name = request.model_name();
  auto swap = repository_->LoadModel(name);
  const absl::Status status = swap.status();
  // A name that is no model directory gets no label of its own: clients cannot grow
  // the label set; every other outcome concerns a directory the operator made.
  const bool named = status.code() != absl::StatusCode::kInvalidArgument &&
                     status.code() != absl::StatusCode::kNotFound;
  metrics_->RecordModelLoad(named ? name : "", StatusCodeName(status));
  if (!swap.ok()) return status;
  Publish(*swap);
  LogInfo(absl::StrCat("RepositoryModelLoad '", name, "': ", swap->added.size(),
                       " version(s) now served, ", swap->removed.size(), " replaced"));
  return absl::OkStatus();
}

absl::StatusOr<AddedVersion> ModelControl::AddVersion(
    const std::string& name, const std::function<absl::Status(const std::string& dir)>& write) {
  std::lock_guard<std::mutex> lock(mu_);
  auto added = repository_->AddVersion(name, write);
  const absl::Status status = added.status();
  // As Load: a refused name gets no label of its own.
  const bool named = status.code() != absl::StatusCode::kInvalidArgument &&
                     status.code() != absl::StatusCode::kNotFound;
  metrics_->RecordModelLoad(named ? name : "", StatusCodeName(status));
  if (!added.ok()) return status;
  Publish(added->swap);
  LogInfo(absl::StrCat("model '", name, "' version ", added->version, " added and loaded; ",
                       added->swap.added.size(), " version(s) now served"));
  return added;
}

absl::Status ModelControl::Unload(const inference::RepositoryModelUnloadRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  auto swap = repository_->UnloadModel(request.model_name());
  if (!swap.ok()) return swap.status();
  Publish(*swap);
  return absl::OkStatus();
}

}  // namespace flashtick
