// ModelRepository: the models flashtickd serves, laid out like Triton's model
// repository:  <root>/<name>/<version>/{config.json, model.safetensors}
// where <version> is a positive integer. Every version of every model is loaded
// at startup onto one Backend; a directory that fails to load stops the server
// (the operator sees the reason instead of a server that serves less than asked).
// A model that loads but whose shape the backend has no kernel for (a head dim the
// GPU does not run) is refused apart: it stays listed as UNAVAILABLE with the reason
// (log, RepositoryIndex, ModelReady false, FAILED_PRECONDITION on every call), its
// weights are dropped, and the other models serve.
// Changeable at run time (RepositoryModelLoad / Unload) without a lock on the
// request path: the served models are an immutable snapshot that writers replace
// whole (copy, change, publish) one at a time. Lookups hand out shared_ptrs to
// entries, so a request or an open stream keeps the version it started with (and
// its weights) until it lets go, even after that version is unloaded or replaced.
// An empty requested version means the highest loaded version, as in Triton's
// "latest" policy.
#pragma once

#include <cstdint>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/backend.h"
#include "model/transformer.h"

namespace flashtick {

// One loaded model version.
struct ModelEntry {
  std::string name;
  int64_t version = 0;
  std::string path;                    // <root>/<name>/<version>
  std::unique_ptr<Transformer> model;  // null only in lookup tests
  std::string kernel_path;             // Transformer::kernel_path() at load
  std::string device;                  // "cpu" or "cuda"
  int features = 0;                    // F the model expects
  int classes = 0;
  int64_t max_context = 0;
  // Non-empty: refused at load (Transformer::CheckServable), never served; `model` is null.
  std::string unavailable_reason;

  std::string version_string() const { return std::to_string(version); }
};

using ModelEntryPtr = std::shared_ptr<const ModelEntry>;

// What a load or unload changed: the entries that stopped being served and the
// ones that started (the metrics follow both).
struct ModelSwap {
  std::vector<ModelEntryPtr> removed;
  std::vector<ModelEntryPtr> added;
};

// A version AddVersion wrote and loaded.
struct AddedVersion {
  int64_t version = 0;
  std::string path;  // <root>/<name>/<version>
  ModelSwap swap;    // what LoadModel of the name changed
};

class ModelRepository {
 public:
  // The rule for a model name from a client (RepositoryModelLoad, promotion): one
  // directory right under the root; INVALID_ARGUMENT naming what is wrong.
  static absl::Status ValidateModelName(absl::string_view name);

  // Scans `root` and loads every <name>/<version> onto `backend` (not owned, must
  // outlive the repository). Non-numeric entries under a model are skipped with a
  // warning, as Triton does; a model with no version directory is an error.
  // max_models: most models (names) served at once, 0 = no limit; a repository
  // holding more fails to load, naming the flag.
  static absl::StatusOr<std::unique_ptr<ModelRepository>> Load(const std::string& root,
                                                               Backend* backend,
                                                               int max_models = 0);
  // A repository over given entries (tests, embedded use). LoadModel answers
  // FAILED_PRECONDITION on it: it has no root to load from.
  static absl::StatusOr<std::unique_ptr<ModelRepository>> FromEntries(
      std::vector<std::unique_ptr<ModelEntry>> entries);

  // NOT_FOUND for an unknown name or version, INVALID_ARGUMENT for an empty name
  // or a version that is not a positive integer, FAILED_PRECONDITION (with the reason)
  // for a version refused at load. An empty version is the highest one that serves.
  // Messages list what exists.
  absl::StatusOr<ModelEntryPtr> Find(absl::string_view name, absl::string_view version) const;

  std::vector<std::string> ModelNames() const;
  // Loaded versions of `name`, ascending; empty when unknown.
  std::vector<std::string> Versions(absl::string_view name) const;
  // Every entry, refused ones included (RepositoryIndex lists them with their reason).
  std::vector<ModelEntryPtr> Entries() const;

  // (Re)loads <root>/<name>/ the way Load does at startup and replaces every version
  // of `name` at once. On any error nothing served changes. INVALID_ARGUMENT for a
  // name that is not one directory right under the root; NOT_FOUND when that
  // directory is missing; RESOURCE_EXHAUSTED when a new name would pass max_models;
  // otherwise the load's own error. Loads and unloads run one at a time.
  absl::StatusOr<ModelSwap> LoadModel(absl::string_view name);
  // Writes a new version of `name` and loads the model as LoadModel does, under the
  // same writer lock (promotions and loads run one at a time). `write` fills a
  // temporary directory <root>/<name>/.promote-<random> (config.json,
  // model.safetensors); it is renamed to <root>/<name>/<v>, v = 1 + the highest
  // version directory on disk (1 for a new name, whose directory is created). If
  // `write` or the load fails, the new directory is removed and nothing served
  // changes. Name errors as LoadModel's; FAILED_PRECONDITION without a root.
  absl::StatusOr<AddedVersion> AddVersion(
      absl::string_view name, const std::function<absl::Status(const std::string& dir)>& write);
  // Stops serving every version of `name`; NOT_FOUND when it is not loaded. Holders
  // of its entries keep them until they let go.
  absl::StatusOr<ModelSwap> UnloadModel(absl::string_view name);

  // Runs on every servable version LoadModel or AddVersion loads, after its weights
  // are in and before the snapshot that serves it is published, under the writer
  // lock: flashtickd's --warm-up, so a model loaded at run time answers its first
  // request as warm as one loaded at startup. It cannot refuse a version (a failed
  // warm-up is the hook's to log). Set it before the first load at run time.
  using PrepareFn = std::function<void(const ModelEntry&)>;
  void set_prepare(PrepareFn prepare) { prepare_ = std::move(prepare); }

 private:
  // name -> version -> entry; never changed once published.
  using Models = std::map<std::string, std::map<int64_t, ModelEntryPtr>, std::less<>>;

  ModelRepository() = default;
  std::shared_ptr<const Models> snapshot() const { return models_.load(); }
  // A valid name, and a repository with a root to load from.
  absl::Status CheckChangeable(absl::string_view name) const;
  // LoadModel with writer_mu_ held and the name checked.
  absl::StatusOr<ModelSwap> LoadModelLocked(absl::string_view name);
  static absl::StatusOr<ModelEntryPtr> FindIn(const Models& models, absl::string_view name,
                                              absl::string_view version);

  std::string root_;           // "" for FromEntries
  Backend* backend_ = nullptr;
  int max_models_ = 0;
  std::mutex writer_mu_;       // one LoadModel / UnloadModel at a time
  PrepareFn prepare_;          // may be empty
  // Readers load it without a lock (std::atomic<std::shared_ptr>, C++20).
  std::atomic<std::shared_ptr<const Models>> models_{std::make_shared<const Models>()};
};

}  // namespace flashtick
