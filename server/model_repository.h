// ModelRepository: the models flashtickd serves, laid out like Triton's model
// repository:  <root>/<name>/<version>/{config.json, model.safetensors}
// where <version> is a positive integer. Every version of every model is loaded
// at startup onto one Backend; a directory that fails to load stops the server
// (the operator sees the reason instead of a server that serves less than asked).
// A model that loads but whose shape the backend has no kernel for (a head dim the
// GPU does not run) is refused apart: it stays listed as UNAVAILABLE with the reason
// (log, RepositoryIndex, ModelReady false, FAILED_PRECONDITION on every call), its
// weights are dropped, and the other models serve.
// Immutable after Load, so lookups need no lock. An empty requested version
// means the highest loaded version, as in Triton's "latest" policy.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
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

class ModelRepository {
 public:
  // Scans `root` and loads every <name>/<version> onto `backend` (not owned, must
  // outlive the repository). Non-numeric entries under a model are skipped with a
  // warning, as Triton does; a model with no version directory is an error.
  static absl::StatusOr<std::unique_ptr<ModelRepository>> Load(const std::string& root,
                                                               Backend* backend);
  // A repository over given entries (tests, embedded use).
  static absl::StatusOr<std::unique_ptr<ModelRepository>> FromEntries(
      std::vector<std::unique_ptr<ModelEntry>> entries);

  // NOT_FOUND for an unknown name or version, INVALID_ARGUMENT for an empty name
  // or a version that is not a positive integer, FAILED_PRECONDITION (with the reason)
  // for a version refused at load. An empty version is the highest one that serves.
  // Messages list what exists.
  absl::StatusOr<const ModelEntry*> Find(absl::string_view name, absl::string_view version) const;

  std::vector<std::string> ModelNames() const;
  // Loaded versions of `name`, ascending; empty when unknown.
  std::vector<std::string> Versions(absl::string_view name) const;
  // Every entry, refused ones included (RepositoryIndex lists them with their reason).
  std::vector<const ModelEntry*> Entries() const;

 private:
  ModelRepository() = default;
  // name -> version -> entry
  std::map<std::string, std::map<int64_t, std::unique_ptr<ModelEntry>>, std::less<>> models_;
};

}  // namespace flashtick
