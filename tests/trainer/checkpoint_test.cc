// Checkpoints (trainer/train_checkpoint.h): training 10 steps equals training 5,
// saving, loading into a fresh trainer and training 5 more, bit for bit (losses and
// weights), for AdamW and Sophia-H (whose Hutchinson probes come from the saved RNG
// state), with micro-batches; corrupted, truncated or missing files are refused with
// DataLoss/NotFound errors that name the file; stale step files and the temporaries
// of interrupted writes are cleaned up; the caller's attachment is the one of the
// save on disk; and the CRC-32 matches zlib's.
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "common/file_io.h"
#include "trainer/crc32.h"
#include "trainer/train_checkpoint.h"
#include "trainer/trainer.h"
#include "tests/trainer/train_test_util.h"

namespace flashtick::train_test {
namespace {

TrainerOptions Options(OptimizerKind kind) {
  TrainerOptions o;
  o.optimizer = kind;
  o.hyper = OptimizerHyper::Defaults(kind);
  o.lr = LrSchedule{3e-3, 3, 10, 0.1};
  o.micro_batch = 2;
  o.hessian_interval = 3;  // refreshes at steps 1, 4, 7, 10: two of them after the resume
  o.seed = 9;
  return o;
}

std::string TempDir(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "_" + std::to_string(getpid());
}

class Resume : public ::testing::TestWithParam<OptimizerKind> {};

TEST_P(Resume, TenStepsEqualFivePlusCheckpointPlusFive) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const ModelConfig c = TinyConfig();
  std::vector<Batch> batches;
  for (int s = 0; s < 10; ++s) batches.push_back(MakeBatch(4, 12, c.features, 100 + s));
  auto run = [&](Trainer& t, int from, int to, std::vector<double>* losses) {
    for (int s = from; s < to; ++s) {
      auto st = t.TrainStep(batches[s].ticks, batches[s].labels, 4, 12);
      ASSERT_TRUE(st.ok()) << st.status();
      losses->push_back(st->loss);
    }
  };
  std::vector<double> straight, resumed;
  auto a = *Trainer::Create(c, Options(GetParam()), be.get());
  run(*a, 0, 10, &straight);
  const std::string dir = TempDir(std::string("ckpt_") + OptimizerKindName(GetParam()));
  {
    auto b = *Trainer::Create(c, Options(GetParam()), be.get());
    run(*b, 0, 5, &resumed);
    ASSERT_TRUE(TrainCheckpoint::Save(*b, dir).ok());
  }  // the first trainer is gone: nothing survives but the files
  auto loaded = TrainCheckpoint::Load(dir, be.get());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->step(), 5);
  run(**loaded, 5, 10, &resumed);
  ASSERT_EQ(straight.size(), resumed.size());
  for (size_t i = 0; i < straight.size(); ++i)
    EXPECT_EQ(std::memcmp(&straight[i], &resumed[i], sizeof(double)), 0)
        << "step " << i + 1 << ": " << straight[i] << " vs " << resumed[i];
  const auto wa = *a->params().ToHost(a->params().values());
  const auto wb = *(*loaded)->params().ToHost((*loaded)->params().values());
  EXPECT_EQ(wa, wb) << "weights after 10 steps differ bitwise";
  const auto ma = *a->params().ToHost(a->optimizer().second());
  const auto mb = *(*loaded)->params().ToHost((*loaded)->optimizer().second());
  EXPECT_EQ(ma, mb);
  EXPECT_EQ(a->rng().state(), (*loaded)->rng().state());
  std::printf("resume_%s: 10 steps == 5 + checkpoint + 5 bitwise; final loss %.17g\n",
              OptimizerKindName(GetParam()), straight.back());
  // Saving again at step 10 replaces the step-5 files.
  ASSERT_TRUE(TrainCheckpoint::Save(**loaded, dir).ok());
  int data_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.find(".safetensors") != std::string::npos) {
      ++data_files;
      EXPECT_NE(n.find("0000000010"), std::string::npos) << n;
    }
  }
  EXPECT_EQ(data_files, 2);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, Resume,
                         ::testing::Values(OptimizerKind::kAdamW, OptimizerKind::kSophiaH),
                         [](const auto& info) {
                           return std::string(OptimizerKindName(info.param));
                         });

// Flips one byte of `path` at `offset` from the end.
void Corrupt(const std::string& path, int64_t from_end) {
  std::string bytes = *ReadFileToString(path);
  bytes[bytes.size() - from_end] ^= 0x5A;
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Checkpoint, RefusesCorruptedFiles) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const Batch batch = MakeBatch(4, 8, TinyConfig().features, 5);
  auto t = *Trainer::Create(TinyConfig(), Options(OptimizerKind::kAdamW), be.get());
  ASSERT_TRUE(t->TrainStep(batch.ticks, batch.labels, 4, 8).ok());
  const std::string dir = TempDir("ckpt_corrupt");
  auto fresh = [&] {
    std::filesystem::remove_all(dir);
    EXPECT_TRUE(TrainCheckpoint::Save(*t, dir).ok());
  };
  const std::string params = dir + "/params-0000000001.safetensors";
  const std::string state = dir + "/optimizer-0000000001.safetensors";
  fresh();
  ASSERT_TRUE(TrainCheckpoint::Load(dir, be.get()).ok());
  Corrupt(params, 3);  // a bit of a weight
  auto r = TrainCheckpoint::Load(dir, be.get());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("CRC-32"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("params-0000000001"), std::string::npos) << r.status();
  fresh();
  std::string bytes = *ReadFileToString(state);
  std::ofstream(state, std::ios::binary) << bytes.substr(0, bytes.size() / 2);  // truncated
  r = TrainCheckpoint::Load(dir, be.get());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("bytes"), std::string::npos) << r.status();
  fresh();
  std::filesystem::remove(state);
  EXPECT_FALSE(TrainCheckpoint::Load(dir, be.get()).ok());
  fresh();
  std::ofstream(dir + "/manifest.json") << "{\"format\": \"flashtick-train-checkpoint\", \"vers";
  r = TrainCheckpoint::Load(dir, be.get());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  fresh();
  std::ofstream(dir + "/manifest.json")
      << "{\"format\": \"flashtick-train-checkpoint\", \"version\": 1}";
  r = TrainCheckpoint::Load(dir, be.get());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  std::filesystem::remove_all(dir);
}

// The files a kill mid-write leaves (common/file_io.h temporaries) go at the next Save,
// and only those: the checkpoint on disk, other files and this process's own
// temporaries (perhaps in flight) stay as they are.
TEST(Checkpoint, NextSaveRemovesTemporariesOfInterruptedWrites) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const Batch batch = MakeBatch(4, 8, TinyConfig().features, 6);
  auto t = *Trainer::Create(TinyConfig(), Options(OptimizerKind::kAdamW), be.get());
  ASSERT_TRUE(t->TrainStep(batch.ticks, batch.labels, 4, 8).ok());
  const std::string dir = TempDir("ckpt_interrupted");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(TrainCheckpoint::Save(*t, dir).ok());
  std::map<std::string, std::string> saved;  // the real checkpoint, name -> bytes
  for (const auto& e : std::filesystem::directory_iterator(dir))
    saved[e.path().filename().string()] = *ReadFileToString(e.path().string());
  ASSERT_EQ(saved.size(), 3u);
  const int64_t dead_pid = 999999999;  // above Linux's pid_max: no such process
  const std::vector<std::string> stale = {
      absl::StrCat("params-0000000002.safetensors.tmp.", dead_pid, ".12345"),
      absl::StrCat("optimizer-0000000002.safetensors.tmp.", dead_pid, ".678"),
      absl::StrCat("manifest.json.tmp.", dead_pid, ".9")};
  const std::vector<std::string> kept = {
      absl::StrCat("params-0000000002.safetensors.tmp.", ::getpid(), ".1"),  // ours
      absl::StrCat("state.json.tmp.", dead_pid, ".2"),  // not a checkpoint file
      "params-0000000002.safetensors.tmp.x.3", "notes.txt"};
  for (const auto& n : stale) std::ofstream(dir + "/" + n) << "torn";
  for (const auto& n : kept) std::ofstream(dir + "/" + n) << "other";

  std::vector<std::string> removed = TrainCheckpoint::RemoveInterruptedWrites(dir);
  std::sort(removed.begin(), removed.end());
  std::vector<std::string> want = stale;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(removed, want);
  for (const auto& n : stale) EXPECT_FALSE(std::filesystem::exists(dir + "/" + n)) << n;
  for (const auto& n : kept) EXPECT_TRUE(std::filesystem::exists(dir + "/" + n)) << n;
  for (const auto& [name, bytes] : saved)
    EXPECT_EQ(*ReadFileToString(dir + "/" + name), bytes) << name << " changed";
  auto loaded = TrainCheckpoint::Load(dir, be.get());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->step(), 1);

  // Save does it first: a stale temporary from a killed writer is gone after it.
  const std::string again = absl::StrCat("params-0000000002.safetensors.tmp.", dead_pid, ".4");
  std::ofstream(dir + "/" + again) << "torn";
  ASSERT_TRUE(t->TrainStep(batch.ticks, batch.labels, 4, 8).ok());
  ASSERT_TRUE(TrainCheckpoint::Save(*t, dir).ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/" + again));
  EXPECT_TRUE(std::filesystem::exists(dir + "/params-0000000002.safetensors"));
  for (const auto& n : kept) EXPECT_TRUE(std::filesystem::exists(dir + "/" + n)) << n;
  ASSERT_TRUE(TrainCheckpoint::Load(dir, be.get()).ok());
  std::filesystem::remove_all(dir);
}

// The attachment lives in the manifest: the save that publishes the weights publishes
// it, a later save replaces it, a save without one drops it; Load ignores it.
TEST(Checkpoint, AttachmentTravelsWithItsSave) {
  auto be = *CreateBackend("cpu", BackendOptions{2, 0});
  const Batch batch = MakeBatch(4, 8, TinyConfig().features, 7);
  auto t = *Trainer::Create(TinyConfig(), Options(OptimizerKind::kSophiaH), be.get());
  const std::string dir = TempDir("ckpt_attachment");
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(absl::IsNotFound(TrainCheckpoint::LoadAttachment(dir).status()));
  ASSERT_TRUE(t->TrainStep(batch.ticks, batch.labels, 4, 8).ok());
  ASSERT_TRUE(TrainCheckpoint::Save(*t, dir, {{"arm_state", {{"step", 1}, {"tokens", 32}}}}).ok());
  auto a = TrainCheckpoint::LoadAttachment(dir);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)["arm_state"]["step"], 1);
  ASSERT_TRUE(t->TrainStep(batch.ticks, batch.labels, 4, 8).ok());
  ASSERT_TRUE(TrainCheckpoint::Save(*t, dir, {{"arm_state", {{"step", 2}, {"tokens", 64}}}}).ok());
  a = TrainCheckpoint::LoadAttachment(dir);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)["arm_state"]["tokens"], 64);
  auto loaded = TrainCheckpoint::Load(dir, be.get());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->step(), 2);
  ASSERT_TRUE(TrainCheckpoint::Save(**loaded, dir).ok());  // none: a stale one must not stay
  a = TrainCheckpoint::LoadAttachment(dir);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->is_null()) << a->dump();
  ASSERT_TRUE(WriteFileAtomic(dir + "/manifest.json", "{\"format\": 7").ok());  // torn JSON
  EXPECT_TRUE(absl::IsDataLoss(TrainCheckpoint::LoadAttachment(dir).status()));
  ASSERT_TRUE(WriteFileAtomic(dir + "/manifest.json", "{\"format\": \"x\", \"version\": 1}").ok());
  EXPECT_TRUE(absl::IsDataLoss(TrainCheckpoint::LoadAttachment(dir).status()));
  std::filesystem::remove_all(dir);
}

TEST(Checkpoint, Crc32MatchesZlib) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32(""), 0u);
  std::string data(100000, '\0');
  TrainRng rng(1);
  for (char& ch : data) ch = static_cast<char>(rng.Next());
  const uLong z = crc32(0L, reinterpret_cast<const Bytef*>(data.data()), data.size());
  EXPECT_EQ(Crc32(data), static_cast<uint32_t>(z));
  EXPECT_EQ(Crc32(data.substr(500), Crc32(data.substr(0, 500))), static_cast<uint32_t>(z));
}

}  // namespace
}  // namespace flashtick::train_test
