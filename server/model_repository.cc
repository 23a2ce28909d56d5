// Model repository scan, load and lookup (see model_repository.h). Load reads
// each version through Transformer::Load, which validates config.json and the
// safetensors header against it; this file adds the layout rules and the
// messages that name the offending path.
#include "server/model_repository.h"

#include <charconv>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/logging.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

// A Triton version directory name: digits only, value ≥ 1.
bool ParseVersion(absl::string_view text, int64_t* version) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  auto result = std::from_chars(text.data(), text.data() + text.size(), *version);
  return result.ec == std::errc() && *version >= 1;
}

std::string DeviceName(DeviceKind kind) { return kind == DeviceKind::kCuda ? "cuda" : "cpu"; }

}  // namespace

absl::StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::Load(const std::string& root,
                                                                        Backend* backend) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return absl::NotFoundError(absl::StrCat(
        "model repository '", root,
        "' is not a directory; pass --model-repository pointing at models/<name>/<version>/ "
        "(flashtick_make_model writes one)"));
  }
  std::vector<std::unique_ptr<ModelEntry>> entries;
  for (const auto& model_dir : fs::directory_iterator(root, ec)) {
    if (!model_dir.is_directory()) continue;
    const std::string name = model_dir.path().filename().string();
    int versions_found = 0;
    for (const auto& version_dir : fs::directory_iterator(model_dir.path(), ec)) {
      int64_t version = 0;
      const std::string leaf = version_dir.path().filename().string();
      if (!version_dir.is_directory() || !ParseVersion(leaf, &version)) {
        LogWarning(absl::StrCat("model repository: skipping ", version_dir.path().string(),
                                " (not a positive integer version directory)"));
        continue;
      }
      auto entry = std::make_unique<ModelEntry>();
      entry->name = name;
      entry->version = version;
      entry->path = version_dir.path().string();
      auto model = Transformer::Load(entry->path, backend);
      if (!model.ok()) {
        return absl::Status(model.status().code(),
                            absl::StrCat("loading model '", name, "' version ", version, " from ",
                                         entry->path, ": ", model.status().message()));
      }
      entry->model = std::move(model).value();
      entry->kernel_path = entry->model->kernel_path();
      entry->device = DeviceName(backend->device());
      entry->features = entry->model->config().features;
      entry->classes = entry->model->config().classes;
      entry->max_context = entry->model->config().max_context;
      if (absl::Status servable = entry->model->CheckServable(); !servable.ok()) {
        entry->unavailable_reason = std::string(servable.message());
        entry->model.reset();  // its weights would only hold device memory
        LogWarning(absl::StrCat("refusing model '", name, "' version ", version, " from ",
                                entry->path, ": ", entry->unavailable_reason));
      } else {
        LogInfo(absl::StrCat("loaded model '", name, "' version ", version, " (",
                             entry->model->parameter_count(), " parameters, F=", entry->features,
                             ", kernel_path=", entry->kernel_path, ", device=", entry->device, ")"));
      }
      entries.push_back(std::move(entry));
      ++versions_found;
    }
    if (ec) {
      return absl::InternalError(
          absl::StrCat("reading ", model_dir.path().string(), ": ", ec.message()));
    }
    if (versions_found == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "model '", name, "' in ", root,
          " has no version directory; expected ", name, "/1/{config.json,model.safetensors}"));
    }
  }
  if (ec) return absl::InternalError(absl::StrCat("reading ", root, ": ", ec.message()));
  if (entries.empty()) LogWarning(absl::StrCat("model repository ", root, " holds no models"));
  return FromEntries(std::move(entries));
}

absl::StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::FromEntries(
    std::vector<std::unique_ptr<ModelEntry>> entries) {
  std::unique_ptr<ModelRepository> repo(new ModelRepository());
  for (auto& entry : entries) {
    auto& versions = repo->models_[entry->name];
    if (versions.count(entry->version)) {
      return absl::AlreadyExistsError(absl::StrCat("model '", entry->name, "' version ",
                                                   entry->version, " appears twice"));
    }
    const int64_t version = entry->version;
    versions[version] = std::move(entry);
  }
  return repo;
}

absl::StatusOr<const ModelEntry*> ModelRepository::Find(absl::string_view name,
                                                        absl::string_view version) const {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model name is empty; this server serves: ", absl::StrJoin(ModelNames(), ", ")));
  }
  auto model = models_.find(name);
  if (model == models_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name,
                                            "'; this server serves: ",
                                            absl::StrJoin(ModelNames(), ", ")));
  }
  const auto& versions = model->second;
  auto refused = [&](const ModelEntry& e) {
    return absl::FailedPreconditionError(absl::StrCat("model '", name, "' version ", e.version,
                                                      " was refused at load: ", e.unavailable_reason));
  };
  if (version.empty()) {
    for (auto it = versions.rbegin(); it != versions.rend(); ++it)
      if (it->second->unavailable_reason.empty()) return it->second.get();
    return refused(*versions.rbegin()->second);
  }
  int64_t number = 0;
  if (!ParseVersion(version, &number)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model version '", version,
        "' is not a version number; use a positive integer such as 1, or leave it empty for "
        "the latest"));
  }
  auto found = versions.find(number);
  if (found == versions.end()) {
    return absl::NotFoundError(absl::StrCat("model '", name, "' has no version ", version,
                                            "; loaded versions: ",
                                            absl::StrJoin(Versions(name), ", ")));
  }
  if (!found->second->unavailable_reason.empty()) return refused(*found->second);
  return found->second.get();
}

std::vector<std::string> ModelRepository::ModelNames() const {
  std::vector<std::string> names;
  for (const auto& [name, versions] : models_) names.push_back(name);
  return names;
}

std::vector<std::string> ModelRepository::Versions(absl::string_view name) const {
  std::vector<std::string> out;
  auto model = models_.find(name);
  if (model == models_.end()) return out;
  for (const auto& [version, entry] : model->second) out.push_back(std::to_string(version));
  return out;
}

std::vector<const ModelEntry*> ModelRepository::Entries() const {
  std::vector<const ModelEntry*> out;
  for (const auto& [name, versions] : models_) {
    for (const auto& [version, entry] : versions) out.push_back(entry.get());
  }
  return out;
}

}  // namespace flashtick
