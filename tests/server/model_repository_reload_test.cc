// ModelRepository at run time (RepositoryModelLoad / Unload underneath): a model
// that appears on disk loads, a reload replaces every version at once, an unload
// stops serving, bad names never touch the file system outside the root, a failed
// load leaves the old version serving, an entry held by a request outlives its
// unload, and --max-loaded-models refuses one model too many. AddVersion (sweep
// promotion) writes the next version through a temporary directory and loads it, and
// removes it again when the write or the load fails. Small random models
// on the CPU backend; no timing anywhere.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/random_ticks.h"
#include "kernels/backend.h"
#include "model/transformer.h"
#include "server/inference/model_control.h"
#include "server/metrics/metrics.h"
#include "server/model_repository.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

class RepositoryReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("flashtick_reload_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    auto backend = CreateBackend("cpu");
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(backend).value();
  }
  void TearDown() override { fs::remove_all(root_); }

  // A small random model at <root>/<name>/<version>; `width` tells versions apart.
  void Save(const std::string& name, int version, int width = 16) {
    ModelConfig config;
    config.name = name;
    config.width = width;
    config.layers = 1;
    config.heads = 2;
    config.kv_heads = 2;
    config.max_context = 64;
    auto model = Transformer::InitRandom(config, 7, backend_.get());
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE((*model)->Save((root_ / name / std::to_string(version)).string()).ok());
  }

  std::unique_ptr<ModelRepository> Open(int max_models = 0) {
    auto repo = ModelRepository::Load(root_.string(), backend_.get(), max_models);
    EXPECT_TRUE(repo.ok()) << repo.status();
    return repo.ok() ? std::move(repo).value() : nullptr;
  }

  fs::path root_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(RepositoryReloadTest, LoadServesAModelThatAppearedOnDisk) {
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  EXPECT_EQ(repo->Find("alpha", "").status().code(), absl::StatusCode::kNotFound);
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  auto swap = repo->LoadModel("alpha");
  ASSERT_TRUE(swap.ok()) << swap.status();
  EXPECT_TRUE(swap->removed.empty());
  ASSERT_EQ(swap->added.size(), 1u);
  auto found = repo->Find("alpha", "");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->get(), swap->added[0].get());
  EXPECT_NE((*found)->model, nullptr);
  EXPECT_EQ(repo->ModelNames(), (std::vector<std::string>{"alpha"}));
}

TEST_F(RepositoryReloadTest, ReloadReplacesEveryVersionAtOnce) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  auto before = repo->Find("alpha", "1");
  ASSERT_TRUE(before.ok());
  fs::remove_all(root_ / "alpha" / "1");
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 2, /*width=*/32));
  auto swap = repo->LoadModel("alpha");
  ASSERT_TRUE(swap.ok()) << swap.status();
  ASSERT_EQ(swap->removed.size(), 1u);
  EXPECT_EQ(swap->removed[0].get(), before->get());
  EXPECT_EQ(repo->Versions("alpha"), (std::vector<std::string>{"2"}));
  EXPECT_EQ(repo->Find("alpha", "1").status().code(), absl::StatusCode::kNotFound);
  auto latest = repo->Find("alpha", "");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->version, 2);
  EXPECT_EQ((*latest)->model->config().width, 32);
}

TEST_F(RepositoryReloadTest, ReloadOfTheSameVersionIsANewEntry) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  auto before = repo->Find("alpha", "1");
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(repo->LoadModel("alpha").ok());
  auto after = repo->Find("alpha", "1");
  ASSERT_TRUE(after.ok());
  EXPECT_NE(before->get(), after->get());  // requests never batch the two together
}

TEST_F(RepositoryReloadTest, UnloadStopsServingAndASecondUnloadIsNotFound) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  ASSERT_NO_FATAL_FAILURE(Save("beta", 1));
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  auto swap = repo->UnloadModel("alpha");
  ASSERT_TRUE(swap.ok()) << swap.status();
  EXPECT_EQ(swap->removed.size(), 1u);
  EXPECT_TRUE(swap->added.empty());
  EXPECT_EQ(repo->Find("alpha", "").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(repo->Find("beta", "").ok());
  EXPECT_EQ(repo->Entries().size(), 1u);
  const absl::Status again = repo->UnloadModel("alpha").status();
  EXPECT_EQ(again.code(), absl::StatusCode::kNotFound) << again;
  EXPECT_NE(again.message().find("loaded: beta"), std::string::npos) << again;
  // The files stay: it loads again.
  ASSERT_TRUE(repo->LoadModel("alpha").ok());
  EXPECT_TRUE(repo->Find("alpha", "1").ok());
}

TEST_F(RepositoryReloadTest, NamesOutsideTheRootAreInvalidAndMissingOnesNotFound) {
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  for (const std::string& name : std::vector<std::string>{"", ".", "..", "../x", "a/b", "/etc", "a\\b", "x..y",
                                 std::string("a\0b", 3), std::string(256, 'm')}) {
    const absl::Status status = repo->LoadModel(name).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << "'" << name << "': " << status;
  }
  const absl::Status missing = repo->LoadModel("nope").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_TRUE(repo->ModelNames().empty());
}

TEST_F(RepositoryReloadTest, FailedLoadLeavesTheServedVersionUntouched) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  auto before = repo->Find("alpha", "");
  ASSERT_TRUE(before.ok());
  fs::create_directories(root_ / "alpha" / "2");
  std::ofstream(root_ / "alpha" / "2" / "config.json") << "{ not json";
  const absl::Status status = repo->LoadModel("alpha").status();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("loading model 'alpha' version 2"), std::string::npos) << status;
  auto after = repo->Find("alpha", "");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->get(), before->get());
  EXPECT_EQ(repo->Versions("alpha"), (std::vector<std::string>{"1"}));

  // A directory with no version at all fails the same way.
  ASSERT_NO_FATAL_FAILURE(Save("beta", 1));
  ASSERT_TRUE(repo->LoadModel("beta").ok());
  fs::remove_all(root_ / "beta" / "1");
  EXPECT_EQ(repo->LoadModel("beta").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(repo->Find("beta", "1").ok());
}

TEST_F(RepositoryReloadTest, AHeldEntryOutlivesItsUnloadAndStillPredicts) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  auto held = repo->Find("alpha", "");  // what an in-flight request holds
  ASSERT_TRUE(held.ok());
  std::weak_ptr<const ModelEntry> watch = *held;
  ASSERT_TRUE(repo->UnloadModel("alpha").ok());
  EXPECT_EQ(repo->Find("alpha", "").status().code(), absl::StatusCode::kNotFound);
  ASSERT_FALSE(watch.expired());
  const ModelEntry& entry = **held;
  const int64_t steps = 8;
  auto probs = entry.model->Predict(RandomTicks(steps * entry.features, 3), 1, steps, true);
  ASSERT_TRUE(probs.ok()) << probs.status();
  EXPECT_EQ(static_cast<int>(probs->size()), entry.classes);
  held = absl::NotFoundError("released");  // the request finishes
  EXPECT_TRUE(watch.expired());            // and the weights go with it
}

TEST_F(RepositoryReloadTest, MaxLoadedModelsRefusesOneMoreButNotAReload) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  ASSERT_NO_FATAL_FAILURE(Save("beta", 1));
  // Startup over the limit fails naming the flag.
  auto too_many = ModelRepository::Load(root_.string(), backend_.get(), /*max_models=*/1);
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(too_many.status().message().find("--max-loaded-models"), std::string::npos);

  fs::remove_all(root_ / "beta");
  auto repo = Open(/*max_models=*/1);
  ASSERT_NE(repo, nullptr);
  ASSERT_NO_FATAL_FAILURE(Save("beta", 1));
  const absl::Status refused = repo->LoadModel("beta").status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_NE(refused.message().find("--max-loaded-models"), std::string::npos) << refused;
  EXPECT_EQ(repo->Find("beta", "").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(repo->LoadModel("alpha").ok());  // a reload adds no model
  ASSERT_TRUE(repo->UnloadModel("alpha").ok());
  EXPECT_TRUE(repo->LoadModel("beta").ok());   // room again
}

TEST_F(RepositoryReloadTest, RepositoryFromEntriesHasNothingToLoadFrom) {
  auto repo = ModelRepository::FromEntries({});
  ASSERT_TRUE(repo.ok());
  EXPECT_EQ((*repo)->LoadModel("alpha").status().code(), absl::StatusCode::kFailedPrecondition);
}

// Readers look the model up without a lock while a writer replaces it: every
// lookup finds a whole version, never a missing or half-built one.
TEST_F(RepositoryReloadTest, LookupsDuringReloadsAlwaysFindAVersion) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) {
    readers.emplace_back([&] {
      do {
        auto found = repo->Find("alpha", "");
        if (!found.ok() || (*found)->model == nullptr) ++failures;
      } while (!done.load());
    });
  }
  int reloads = 0;  // EXPECT, not ASSERT: the readers must be joined on every path
  for (int i = 0; i < 5; ++i) reloads += repo->LoadModel("alpha").ok();
  done.store(true);
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(reloads, 5);
  EXPECT_EQ(failures.load(), 0);
}

// flashtick_model_info follows loads and unloads; flashtick_model_loads_total
// counts each load by result, with no label for names that are no model directory.
TEST_F(RepositoryReloadTest, ModelControlKeepsTheMetricsInStep) {
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  Metrics metrics;
  ModelControl control(repo.get(), &metrics);
  auto series = [&](const std::string& family, const std::string& label,
                    const std::string& value) {
    int count = 0;
    for (const auto& f : metrics.registry()->Collect()) {
      if (f.name != family) continue;
      for (const auto& m : f.metric) {
        for (const auto& l : m.label) count += l.name == label && l.value == value;
      }
    }
    return count;
  };
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  inference::RepositoryModelLoadRequest load;
  load.set_model_name("alpha");
  ASSERT_TRUE(control.Load(load).ok());
  ASSERT_TRUE(control.Load(load).ok());  // a reload: still one info series
  EXPECT_EQ(series("flashtick_model_info", "model", "alpha"), 1);
  load.set_model_name("../etc");
  EXPECT_EQ(control.Load(load).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(series("flashtick_model_loads_total", "result", "OK"), 1);
  EXPECT_EQ(series("flashtick_model_loads_total", "model", "../etc"), 0);
  EXPECT_EQ(series("flashtick_model_loads_total", "result", "INVALID_ARGUMENT"), 1);
  inference::RepositoryModelUnloadRequest unload;
  unload.set_model_name("alpha");
  ASSERT_TRUE(control.Unload(unload).ok());
  EXPECT_EQ(series("flashtick_model_info", "model", "alpha"), 0);
  EXPECT_EQ(control.Unload(unload).code(), absl::StatusCode::kNotFound);
}

// Writes a model like Save's into `dir` (AddVersion's writer).
absl::Status WriteModel(Backend* backend, const std::string& dir, int width) {
  ModelConfig config;
  config.name = "promoted";
  config.width = width;
  config.layers = 1;
  config.heads = 2;
  config.kv_heads = 2;
  config.max_context = 64;
  auto model = Transformer::InitRandom(config, 11, backend);
  if (!model.ok()) return model.status();
  return (*model)->Save(dir);
}

std::vector<std::string> Leaves(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(RepositoryReloadTest, AddVersionWritesTheNextVersionAndServesItAsLatest) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 3));  // numbering follows the highest on disk
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  auto added = repo->AddVersion("alpha", [&](const std::string& dir) {
    EXPECT_NE(fs::path(dir).filename().string().find(".promote-"), std::string::npos) << dir;
    return WriteModel(backend_.get(), dir, 32);
  });
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->version, 4);
  EXPECT_EQ(added->path, (root_ / "alpha" / "4").string());
  EXPECT_EQ(repo->Versions("alpha"), (std::vector<std::string>{"1", "3", "4"}));
  auto latest = repo->Find("alpha", "");
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ((*latest)->version, 4);
  EXPECT_EQ(Leaves(root_ / "alpha"), (std::vector<std::string>{"1", "3", "4"}));

  // A new name starts at version 1.
  added = repo->AddVersion("fresh", [&](const std::string& dir) {
    return WriteModel(backend_.get(), dir, 16);
  });
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->version, 1);
  EXPECT_TRUE(repo->Find("fresh", "1").ok());
}

// The prepare hook (flashtickd's --warm-up at run time) sees every servable version a
// load brings, weights in, while the snapshot still serves what was there before.
TEST_F(RepositoryReloadTest, PrepareSeesEachNewVersionBeforeItServes) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  std::vector<std::string> prepared;
  repo->set_prepare([&](const ModelEntry& entry) {
    prepared.push_back(entry.name + "/" + entry.version_string());
    EXPECT_NE(entry.model, nullptr);
    // Not yet served: the old version 1 (alpha) or nothing (beta) answers meanwhile.
    auto served = repo->Find(entry.name, "");
    if (entry.name == "alpha") {
      ASSERT_TRUE(served.ok()) << served.status();
      EXPECT_EQ((*served)->version, 1);
      EXPECT_NE(served->get(), &entry);
    } else {
      EXPECT_EQ(served.status().code(), absl::StatusCode::kNotFound);
    }
  });
  EXPECT_TRUE(prepared.empty());  // startup loads are the server's to warm
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 2));
  ASSERT_TRUE(repo->LoadModel("alpha").ok());
  EXPECT_EQ(prepared, (std::vector<std::string>{"alpha/1", "alpha/2"}));
  auto added = repo->AddVersion("beta", [&](const std::string& dir) {
    return WriteModel(backend_.get(), dir, 16);
  });
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(prepared, (std::vector<std::string>{"alpha/1", "alpha/2", "beta/1"}));
  EXPECT_EQ((*repo->Find("alpha", ""))->version, 2);
}

TEST_F(RepositoryReloadTest, AddVersionThatFailsLeavesNothingBehind) {
  ASSERT_NO_FATAL_FAILURE(Save("alpha", 1));
  auto repo = Open();
  ASSERT_NE(repo, nullptr);
  auto before = repo->Find("alpha", "");
  ASSERT_TRUE(before.ok());
  // The writer fails: its error, and no temporary directory left.
  auto added = repo->AddVersion("alpha", [](const std::string&) {
    return absl::DataLossError("checkpoint unreadable");
  });
  EXPECT_EQ(added.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Leaves(root_ / "alpha"), (std::vector<std::string>{"1"}));
  // The written version does not load: removed again, version 1 still serves.
  added = repo->AddVersion("alpha", [](const std::string& dir) {
    std::ofstream(dir + "/config.json") << "{ not json";
    return absl::OkStatus();
  });
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("loading model 'alpha' version 2"), std::string::npos)
      << added.status();
  EXPECT_EQ(Leaves(root_ / "alpha"), (std::vector<std::string>{"1"}));
  auto after = repo->Find("alpha", "");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->get(), before->get());
  // A failed first version of a new name leaves no model directory either.
  added = repo->AddVersion("fresh", [](const std::string&) { return absl::OkStatus(); });
  EXPECT_FALSE(added.ok());
  EXPECT_FALSE(fs::exists(root_ / "fresh"));
  // Names: the LoadModel rule; nothing created outside the root.
  for (const std::string bad : {"", "..", "../out", "a/b"}) {
    added = repo->AddVersion(bad, [](const std::string&) { return absl::OkStatus(); });
    EXPECT_EQ(added.status().code(), absl::StatusCode::kInvalidArgument) << "'" << bad << "'";
  }
  EXPECT_FALSE(fs::exists(root_.parent_path() / "out"));
  // A repository made of entries has no root to write into.
  auto entries = ModelRepository::FromEntries({});
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ((*entries)->AddVersion("alpha", [](const std::string&) { return absl::OkStatus(); })
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace flashtick
