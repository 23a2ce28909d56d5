// ModelRepository: lookup rules (latest version for "", NOT_FOUND naming what
// exists, INVALID_ARGUMENT for malformed names/versions) over in-memory entries,
// and the directory-layout errors of Load (no model code needed for those).
#include "server/model_repository.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "kernels/backend.h"

namespace flashtick {
namespace {

std::unique_ptr<ModelEntry> Entry(const std::string& name, int64_t version) {
  auto entry = std::make_unique<ModelEntry>();
  entry->name = name;
  entry->version = version;
  return entry;
}

std::unique_ptr<ModelRepository> TwoModels() {
  std::vector<std::unique_ptr<ModelEntry>> entries;
  entries.push_back(Entry("alpha", 1));
  entries.push_back(Entry("alpha", 3));
  entries.push_back(Entry("beta", 2));
  auto repo = ModelRepository::FromEntries(std::move(entries));
  EXPECT_TRUE(repo.ok()) << repo.status();
  return std::move(repo).value();
}

void ExpectError(const absl::StatusOr<const ModelEntry*>& result, absl::StatusCode code,
                 const std::string& fragment) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_NE(std::string(result.status().message()).find(fragment), std::string::npos)
      << result.status().message();
}

TEST(ModelRepository, EmptyVersionIsTheLatest) {
  auto repo = TwoModels();
  auto found = repo->Find("alpha", "");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->version, 3);
  found = repo->Find("alpha", "1");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->version, 1);
  EXPECT_EQ(repo->Versions("alpha"), (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ(repo->ModelNames(), (std::vector<std::string>{"alpha", "beta"}));
}

TEST(ModelRepository, UnknownModelAndVersionAreNotFoundAndListWhatExists) {
  auto repo = TwoModels();
  ExpectError(repo->Find("gamma", ""), absl::StatusCode::kNotFound, "serves: alpha, beta");
  ExpectError(repo->Find("alpha", "2"), absl::StatusCode::kNotFound, "loaded versions: 1, 3");
}

TEST(ModelRepository, MalformedNameOrVersionIsInvalid) {
  auto repo = TwoModels();
  ExpectError(repo->Find("", ""), absl::StatusCode::kInvalidArgument, "model name is empty");
  ExpectError(repo->Find("alpha", "latest"), absl::StatusCode::kInvalidArgument,
              "not a version number");
  ExpectError(repo->Find("alpha", "0"), absl::StatusCode::kInvalidArgument,
              "not a version number");
}

TEST(ModelRepository, DuplicateEntriesAreRefused) {
  std::vector<std::unique_ptr<ModelEntry>> entries;
  entries.push_back(Entry("alpha", 1));
  entries.push_back(Entry("alpha", 1));
  EXPECT_EQ(ModelRepository::FromEntries(std::move(entries)).status().code(),
            absl::StatusCode::kAlreadyExists);
}

class RepositoryDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("flashtick_repo_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    auto backend = CreateBackend("cpu");
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(backend).value();
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(RepositoryDirTest, MissingRootIsNotFound) {
  auto repo = ModelRepository::Load((root_ / "nope").string(), backend_.get());
  EXPECT_EQ(repo.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(repo.status().message()).find("--model-repository"), std::string::npos);
}

TEST_F(RepositoryDirTest, ModelWithoutVersionDirectoryIsAnError) {
  std::filesystem::create_directories(root_ / "alpha" / "notes");
  auto repo = ModelRepository::Load(root_.string(), backend_.get());
  EXPECT_EQ(repo.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(repo.status().message()).find("has no version directory"),
            std::string::npos);
}

TEST_F(RepositoryDirTest, BrokenVersionNamesItsPath) {
  std::filesystem::create_directories(root_ / "alpha" / "1");
  std::ofstream(root_ / "alpha" / "1" / "config.json") << "{ not json";
  auto repo = ModelRepository::Load(root_.string(), backend_.get());
  ASSERT_FALSE(repo.ok());
  EXPECT_NE(std::string(repo.status().message()).find("loading model 'alpha' version 1"),
            std::string::npos)
      << repo.status();
}

TEST_F(RepositoryDirTest, EmptyRepositoryLoads) {
  auto repo = ModelRepository::Load(root_.string(), backend_.get());
  ASSERT_TRUE(repo.ok()) << repo.status();
  EXPECT_TRUE((*repo)->ModelNames().empty());
}

TEST_F(RepositoryDirTest, LoadsASavedModelWithItsShapeAndKernelPath) {
  ModelConfig config;
  config.name = "tiny";
  config.width = 16;
  config.layers = 1;
  config.heads = 2;
  config.kv_heads = 2;
  config.max_context = 512;
  auto model = Transformer::InitRandom(config, 7, backend_.get());
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE((*model)->Save((root_ / "tiny" / "2").string()).ok());
  auto repo = ModelRepository::Load(root_.string(), backend_.get());
  ASSERT_TRUE(repo.ok()) << repo.status();
  auto entry = (*repo)->Find("tiny", "");
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ((*entry)->version, 2);
  EXPECT_EQ((*entry)->features, config.features);
  EXPECT_EQ((*entry)->classes, 3);
  EXPECT_EQ((*entry)->max_context, 512);
  EXPECT_EQ((*entry)->device, "cpu");
  EXPECT_EQ((*entry)->kernel_path, (*entry)->model->kernel_path());
  EXPECT_FALSE((*entry)->kernel_path.empty());
}

}  // namespace
}  // namespace flashtick
