// Model repository scan, load, lookup and run-time (re)load/unload (see
// model_repository.h). Every version is read through Transformer::Load, which
// validates config.json and the safetensors header against it; this file adds the
// layout rules and the messages that name the offending path.
#include "server/model_repository.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <random>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

// One version directory loaded onto `backend`; a shape the backend cannot run is
// kept as refused (unavailable_reason) rather than failing the load.
absl::StatusOr<ModelEntryPtr> LoadVersion(const std::string& name, int64_t version,
                                          const fs::path& dir, Backend* backend) {
  auto entry = std::make_shared<ModelEntry>();
  entry->name = name;
  entry->version = version;
  entry->path = dir.string();
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
  return entry;
}

// Every version directory of one model directory: the code path of both startup
// and RepositoryModelLoad.
absl::StatusOr<std::map<int64_t, ModelEntryPtr>> LoadModelDir(const fs::path& model_dir,
                                                              Backend* backend) {
  const std::string name = model_dir.filename().string();
  std::map<int64_t, ModelEntryPtr> versions;
  std::error_code ec;
  for (const auto& version_dir : fs::directory_iterator(model_dir, ec)) {
    int64_t version = 0;
    const std::string leaf = version_dir.path().filename().string();
    if (!version_dir.is_directory() || !ParseVersion(leaf, &version)) {
      LogWarning(absl::StrCat("model repository: skipping ", version_dir.path().string(),
                              " (not a positive integer version directory)"));
      continue;
    }
    ASSIGN_OR_RETURN(versions[version], LoadVersion(name, version, version_dir.path(), backend));
  }
  if (ec) return absl::InternalError(absl::StrCat("reading ", model_dir.string(), ": ", ec.message()));
  if (versions.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model '", name, "' in ", model_dir.parent_path().string(),
        " has no version directory; expected ", name, "/1/{config.json,model.safetensors}"));
  }
  return versions;
}

absl::Status CheckModelCount(size_t count, int max_models) {
  if (max_models <= 0 || count <= static_cast<size_t>(max_models)) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      count, " models would be loaded but --max-loaded-models is ", max_models,
      "; unload one first (RepositoryModelUnload) or raise the flag"));
}

}  // namespace

// A model name from a client names one directory right under the repository root
// and nothing else: no separators, no "..", nothing absolute (the name is joined to
// the root, so "/etc" would otherwise escape it). Symlinks the operator placed in
// the repository are followed, as at startup.
absl::Status ModelRepository::ValidateModelName(absl::string_view name) {
  constexpr size_t kMaxModelName = 255;  // one path component on common file systems
  if (name.empty()) return absl::InvalidArgumentError("model name is empty");
  if (name.size() > kMaxModelName) {
    return absl::InvalidArgumentError(
        absl::StrCat("model name is ", name.size(), " bytes; at most ", kMaxModelName));
  }
  if (name == "." || name.find("..") != absl::string_view::npos ||
      name.find_first_of(absl::string_view("/\\\0", 3)) != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model name '", name,
        "' is not a directory name under the model repository (no '/', '\\', '..' or NUL)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::Load(const std::string& root,
                                                                        Backend* backend,
                                                                        int max_models) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return absl::NotFoundError(absl::StrCat(
        "model repository '", root,
        "' is not a directory; pass --model-repository pointing at models/<name>/<version>/ "
        "(flashtick_make_model writes one)"));
  }
  auto models = std::make_shared<Models>();
  for (const auto& model_dir : fs::directory_iterator(root, ec)) {
    if (!model_dir.is_directory()) continue;
    ASSIGN_OR_RETURN((*models)[model_dir.path().filename().string()],
                     LoadModelDir(model_dir.path(), backend));
  }
  if (ec) return absl::InternalError(absl::StrCat("reading ", root, ": ", ec.message()));
  if (absl::Status fits = CheckModelCount(models->size(), max_models); !fits.ok()) {
    return absl::Status(fits.code(), absl::StrCat("model repository ", root, ": ", fits.message()));
  }
  if (models->empty()) LogWarning(absl::StrCat("model repository ", root, " holds no models"));
  std::unique_ptr<ModelRepository> repo(new ModelRepository());
  repo->root_ = root;
  repo->backend_ = backend;
  repo->max_models_ = max_models;
  repo->models_.store(std::move(models));
  return repo;
}

absl::StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::FromEntries(
    std::vector<std::unique_ptr<ModelEntry>> entries) {
  auto models = std::make_shared<Models>();
  for (auto& entry : entries) {
    auto& versions = (*models)[entry->name];
    if (versions.count(entry->version)) {
      return absl::AlreadyExistsError(absl::StrCat("model '", entry->name, "' version ",
                                                   entry->version, " appears twice"));
    }
    const int64_t version = entry->version;
    versions[version] = std::move(entry);
  }
  std::unique_ptr<ModelRepository> repo(new ModelRepository());
  repo->models_.store(std::move(models));
  return repo;
}

absl::StatusOr<ModelEntryPtr> ModelRepository::Find(absl::string_view name,
                                                    absl::string_view version) const {
  return FindIn(*snapshot(), name, version);
}

namespace {

std::vector<std::string> NamesIn(const auto& models) {
  std::vector<std::string> names;
  for (const auto& [name, versions] : models) names.push_back(name);
  return names;
}

std::vector<std::string> VersionsIn(const auto& models, absl::string_view name) {
  std::vector<std::string> out;
  auto model = models.find(name);
  if (model == models.end()) return out;
  for (const auto& [version, entry] : model->second) out.push_back(std::to_string(version));
  return out;
}

}  // namespace

// One snapshot answers the whole lookup, so the message lists what was searched.
absl::StatusOr<ModelEntryPtr> ModelRepository::FindIn(const Models& models,
                                                      absl::string_view name,
                                                      absl::string_view version) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model name is empty; this server serves: ", absl::StrJoin(NamesIn(models), ", ")));
  }
  auto model = models.find(name);
  if (model == models.end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name,
                                            "'; this server serves: ",
                                            absl::StrJoin(NamesIn(models), ", ")));
  }
  const auto& versions = model->second;
  auto refused = [&](const ModelEntry& e) {
    return absl::FailedPreconditionError(absl::StrCat("model '", name, "' version ", e.version,
                                                      " was refused at load: ", e.unavailable_reason));
  };
  if (version.empty()) {
    for (auto it = versions.rbegin(); it != versions.rend(); ++it)
      if (it->second->unavailable_reason.empty()) return it->second;
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
                                            absl::StrJoin(VersionsIn(models, name), ", ")));
  }
  if (!found->second->unavailable_reason.empty()) return refused(*found->second);
  return found->second;
}

std::vector<std::string> ModelRepository::ModelNames() const { return NamesIn(*snapshot()); }

std::vector<std::string> ModelRepository::Versions(absl::string_view name) const {
  return VersionsIn(*snapshot(), name);
}

std::vector<ModelEntryPtr> ModelRepository::Entries() const {
  std::vector<ModelEntryPtr> out;
  for (const auto& [name, versions] : *snapshot()) {
    for (const auto& [version, entry] : versions) out.push_back(entry);
  }
  return out;
}

// What LoadModel and AddVersion both need before touching the disk.
absl::Status ModelRepository::CheckChangeable(absl::string_view name) const {
  RETURN_IF_ERROR(ValidateModelName(name));
  if (backend_ == nullptr) {
    return absl::FailedPreconditionError("this repository was not loaded from a directory");
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelSwap> ModelRepository::LoadModel(absl::string_view name) {
  RETURN_IF_ERROR(CheckChangeable(name));
  // Held across the (slow) weight load: loads are rare and must not interleave,
  // and requests never take this lock.
  std::lock_guard<std::mutex> lock(writer_mu_);
  return LoadModelLocked(name);
}

absl::StatusOr<ModelSwap> ModelRepository::LoadModelLocked(absl::string_view name) {
  const fs::path dir = fs::path(root_) / std::string(name);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("no model directory '", dir.string(),
                                            "' in the model repository"));
  }
  std::shared_ptr<const Models> current = snapshot();
  if (!current->count(name)) RETURN_IF_ERROR(CheckModelCount(current->size() + 1, max_models_));
  // A failed load returns here, before anything served changed.
  ASSIGN_OR_RETURN(auto versions, LoadModelDir(dir, backend_));
  if (prepare_) {
    for (const auto& [version, entry] : versions) {
      if (entry->unavailable_reason.empty()) prepare_(*entry);
    }
  }
  ModelSwap swap;
  if (auto old = current->find(name); old != current->end()) {
    for (const auto& [version, entry] : old->second) swap.removed.push_back(entry);
  }
  for (const auto& [version, entry] : versions) swap.added.push_back(entry);
  auto next = std::make_shared<Models>(*current);
  (*next)[std::string(name)] = std::move(versions);
  models_.store(std::move(next));
  return swap;
}

absl::StatusOr<AddedVersion> ModelRepository::AddVersion(
    absl::string_view name, const std::function<absl::Status(const std::string& dir)>& write) {
  RETURN_IF_ERROR(CheckChangeable(name));
  std::lock_guard<std::mutex> lock(writer_mu_);
  const fs::path model_dir = fs::path(root_) / std::string(name);
  std::error_code ec;
  fs::create_directories(model_dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("creating ", model_dir.string(), ": ", ec.message()));
  }
  int64_t highest = 0;
  for (const auto& entry : fs::directory_iterator(model_dir, ec)) {
    int64_t version = 0;
    if (entry.is_directory() && ParseVersion(entry.path().filename().string(), &version)) {
      highest = std::max(highest, version);
    }
  }
  if (ec) return absl::InternalError(absl::StrCat("reading ", model_dir.string(), ": ", ec.message()));
  AddedVersion added;
  added.version = highest + 1;
  const fs::path final_dir = model_dir / std::to_string(added.version);
  added.path = final_dir.string();
  // Not a version name, so a scan that runs meanwhile (none can: the lock) or after a
  // crash skips it.
  std::random_device random;
  const fs::path temp_dir =
      model_dir / absl::StrCat(".promote-", absl::Hex(random(), absl::kZeroPad8));
  fs::create_directory(temp_dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("creating ", temp_dir.string(), ": ", ec.message()));
  }
  if (absl::Status written = write(temp_dir.string()); !written.ok()) {
    fs::remove_all(temp_dir, ec);
    return written;
  }
  fs::rename(temp_dir, final_dir, ec);
  if (ec) {
    const std::string reason = ec.message();
    fs::remove_all(temp_dir, ec);
    return absl::InternalError(absl::StrCat("renaming ", temp_dir.string(), " to ",
                                            final_dir.string(), ": ", reason));
  }
  absl::StatusOr<ModelSwap> swap = LoadModelLocked(name);
  if (!swap.ok()) {
    fs::remove_all(final_dir, ec);
    // A name this call created holds nothing else; leave no empty model behind.
    if (highest == 0) fs::remove(model_dir, ec);
    return swap.status();
  }
  added.swap = *std::move(swap);
  LogInfo(absl::StrCat("added model '", name, "' version ", added.version, " at ", added.path));
  return added;
}

absl::StatusOr<ModelSwap> ModelRepository::UnloadModel(absl::string_view name) {
  std::lock_guard<std::mutex> lock(writer_mu_);
  std::shared_ptr<const Models> current = snapshot();
  auto old = current->find(name);
  if (old == current->end()) {
    return absl::NotFoundError(absl::StrCat("model '", name, "' is not loaded; loaded: ",
                                            absl::StrJoin(NamesIn(*current), ", ")));
  }
  ModelSwap swap;
  for (const auto& [version, entry] : old->second) swap.removed.push_back(entry);
  auto next = std::make_shared<Models>(*current);
  next->erase(std::string(name));
  models_.store(std::move(next));
  LogInfo(absl::StrCat("unloaded model '", name, "'"));
  return swap;
}

}  // namespace flashtick
