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
#include "server/inference/inference_core.h"

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

void ExpectError(const absl::StatusOr<ModelEntryPtr>& result, absl::StatusCode code,
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


// The CPU backend with the attention kernels of one head dim missing, as a GPU
// backend lacks head dims it was not built for: the shape of a real refusal, on the CPU.
class MissingHeadDimBackend final : public Backend {
 public:
  MissingHeadDimBackend(std::unique_ptr<Backend> inner, int missing)
      : inner_(std::move(inner)), missing_(missing) {}
  std::string name() const override { return "missing_d" + std::to_string(missing_); }
  DeviceKind device() const override { return inner_->device(); }
  bool Supports(const OpDesc& desc) const override {
    const bool attention = desc.op == Op::kAttentionFwd || desc.op == Op::kAttentionBwd ||
                           desc.op == Op::kAttentionBwdBwd || desc.op == Op::kAttentionDecode;
    if (attention && desc.attention.head_dim == missing_) return false;
    return inner_->Supports(desc);
  }
  std::string KernelPath(const OpDesc& desc) const override {
    return Supports(desc) ? inner_->KernelPath(desc) : "fake_unsupported_d" + std::to_string(missing_);
  }
  absl::Status Run(const OpDesc& desc, absl::Span<const TensorView> in,
                   absl::Span<const TensorView> out) override {
    ++runs_;
    return inner_->Run(desc, in, out);
  }
  absl::StatusOr<std::shared_ptr<void>> Allocate(size_t bytes) override { return inner_->Allocate(bytes); }
  absl::Status Copy(void* dst, DeviceKind dd, const void* src, DeviceKind sd, size_t n) override {
    return inner_->Copy(dst, dd, src, sd, n);
  }
  absl::Status Zero(void* dst, size_t bytes) override { return inner_->Zero(dst, bytes); }
  absl::Status Synchronize() override { return inner_->Synchronize(); }
  MemoryStats Memory() const override { return inner_->Memory(); }
  void ResetPeakMemory() override { inner_->ResetPeakMemory(); }
  const void* memory_domain() const override { return inner_->memory_domain(); }
  int runs() const { return runs_; }

 private:
  std::unique_ptr<Backend> inner_;
  int missing_;
  int runs_ = 0;
};

void SaveModel(const std::filesystem::path& dir, int width, int heads, Backend* backend) {
  ModelConfig config;
  config.name = "m";
  config.width = width;
  config.layers = 1;
  config.heads = heads;
  config.kv_heads = heads;
  config.max_context = 64;
  auto model = Transformer::InitRandom(config, 7, backend);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE((*model)->Save(dir.string()).ok());
}

TEST_F(RepositoryDirTest, ShapeWithoutKernelIsRefusedAtLoadAndOthersServe) {
  auto cpu = CreateBackend("cpu");
  ASSERT_TRUE(cpu.ok());
  MissingHeadDimBackend fake(std::move(cpu).value(), /*missing=*/16);
  SaveModel(root_ / "small" / "1", /*width=*/64, /*heads=*/4, &fake);   // D = 16: no kernel
  SaveModel(root_ / "wide" / "1", /*width=*/64, /*heads=*/2, &fake);    // D = 32: runs
  SaveModel(root_ / "wide" / "2", /*width=*/64, /*heads=*/4, &fake);    // D = 16: no kernel
  auto repo = ModelRepository::Load(root_.string(), &fake);
  ASSERT_TRUE(repo.ok()) << repo.status();  // one bad shape does not stop the server

  // Refused: every lookup says why, naming the head dim and the kernel path.
  for (const char* version : {"", "1"}) {
    auto small = (*repo)->Find("small", version);
    ASSERT_EQ(small.status().code(), absl::StatusCode::kFailedPrecondition) << small.status();
    EXPECT_NE(small.status().message().find("refused at load"), std::string::npos) << small.status();
    EXPECT_NE(small.status().message().find("head dim 16"), std::string::npos) << small.status();
    EXPECT_NE(small.status().message().find("fake_unsupported_d16"), std::string::npos) << small.status();
  }
  EXPECT_EQ((*repo)->Find("wide", "2").status().code(), absl::StatusCode::kFailedPrecondition);

  // "Latest" is the highest version that serves.
  auto latest = (*repo)->Find("wide", "");
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ((*latest)->version, 1);
  ASSERT_NE((*latest)->model, nullptr);
  EXPECT_TRUE((*latest)->model->CheckServable().ok());

  // The index lists all three; the refused ones keep their reason and hold no weights.
  int refused = 0;
  for (const ModelEntryPtr& e : (*repo)->Entries()) {
    if (e->unavailable_reason.empty()) continue;
    ++refused;
    EXPECT_EQ(e->model, nullptr) << e->name;
    EXPECT_NE(e->unavailable_reason.find("attention_fwd"), std::string::npos) << e->unavailable_reason;
  }
  EXPECT_EQ(refused, 2);

  // What a KServe client sees: ModelReady false, FAILED_PRECONDITION with the reason on
  // metadata and inference, and Triton's UNAVAILABLE state with the reason in the index.
  InferenceCore core(repo->get(), /*max_seq_len=*/64);
  inference::ModelReadyRequest ready;
  ready.set_name("small");
  EXPECT_FALSE(core.ModelReady(ready));
  ready.set_name("wide");
  EXPECT_TRUE(core.ModelReady(ready));
  inference::ModelMetadataRequest meta;
  meta.set_name("small");
  auto md = core.ModelMetadata(meta);
  ASSERT_EQ(md.status().code(), absl::StatusCode::kFailedPrecondition) << md.status();
  EXPECT_NE(md.status().message().find("head dim 16"), std::string::npos) << md.status();
  inference::ModelInferRequest infer;
  infer.set_model_name("small");
  EXPECT_EQ(core.Prepare(&infer).status().code(), absl::StatusCode::kFailedPrecondition);
  const int runs_before = fake.runs();
  int unavailable = 0;
  const inference::RepositoryIndexResponse index = core.RepositoryIndex();
  for (const auto& m : index.models()) {
    if (m.state() == "UNAVAILABLE") {
      ++unavailable;
      EXPECT_NE(m.reason().find("head dim 16"), std::string::npos) << m.reason();
    } else {
      EXPECT_EQ(m.state(), "READY");
      EXPECT_EQ(m.name(), "wide");
    }
  }
  EXPECT_EQ(unavailable, 2);
  EXPECT_EQ(fake.runs(), runs_before);  // nothing ran for a refused model
}

TEST(TransformerServable, NamesTheMissingKernel) {
  auto cpu = CreateBackend("cpu");
  ASSERT_TRUE(cpu.ok());
  MissingHeadDimBackend fake(std::move(cpu).value(), /*missing=*/32);
  ModelConfig config;
  config.width = 64;
  config.heads = 2;  // D = 32
  config.kv_heads = 2;
  config.layers = 1;
  auto model = Transformer::InitRandom(config, 1, &fake);
  ASSERT_TRUE(model.ok()) << model.status();
  const absl::Status s = (*model)->CheckServable();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("head dim 32"), std::string::npos) << s;
  config.heads = config.kv_heads = 4;  // D = 16: the fake has it
  auto ok = Transformer::InitRandom(config, 1, &fake);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE((*ok)->CheckServable().ok());
}

}  // namespace
}  // namespace flashtick
