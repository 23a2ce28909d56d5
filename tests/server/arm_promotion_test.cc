// Which arm PromoteArm serves when none is named (server/experiments/arm_promotion.h):
// the median seed, by its own daily Sharpe, of the verdict's best N; a tie at the top
// asks for an arm. And which checkpoint holds an arm's final weights: the highest
// ckpt-f<k> that has a manifest.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include "server/experiments/arm_promotion.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

void AddArm(v1::Experiment* x, int64_t context, uint64_t seed, double sharpe) {
  v1::ArmStatus* a = x->add_arms();
  a->set_arm_id(absl::StrCat("n", context, "-s", seed));
  a->set_context_length(context);
  a->set_seed(seed);
  a->set_sharpe(sharpe);
  a->set_arm_state("done");
}

TEST(WinningArmTest, MedianSeedOfTheBestN) {
  v1::Experiment x;
  x.set_id("exp-000007");
  AddArm(&x, 8, 1, 3.0);
  AddArm(&x, 8, 2, 2.0);
  AddArm(&x, 8, 3, 1.0);
  AddArm(&x, 32, 1, 0.5);
  AddArm(&x, 32, 2, -1.0);
  AddArm(&x, 32, 3, 0.1);
  auto arm = WinningArm(x, 32);
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_EQ(*arm, "n32-s3");  // Sharpe -1.0, 0.1, 0.5: the middle one
  arm = WinningArm(x, 8);
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_EQ(*arm, "n8-s2");
  // An even count: the lower median, as the gate's median seed.
  AddArm(&x, 32, 4, 0.2);
  arm = WinningArm(x, 32);
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_EQ(*arm, "n32-s3");  // -1.0, 0.1, 0.2, 0.5
}

TEST(WinningArmTest, OneSeedIsItsOwnMedian) {
  v1::Experiment x;
  AddArm(&x, 8, 1, 0.3);
  AddArm(&x, 32, 1, 0.1);
  x.mutable_arms(0)->set_arm_id("n8");
  x.mutable_arms(1)->set_arm_id("n32");
  auto arm = WinningArm(x, 8);
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_EQ(*arm, "n8");
}

TEST(WinningArmTest, NoSingleBestNAsksForAnArm) {
  v1::Experiment x;
  x.set_id("exp-000003");
  AddArm(&x, 8, 1, 0.3);
  AddArm(&x, 32, 1, 0.3);
  auto arm = WinningArm(x, 0);
  EXPECT_EQ(arm.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(arm.status().message().find("n8-s1, n32-s1"), std::string::npos) << arm.status();
  EXPECT_EQ(WinningArm(x, 64).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(FinalArmCheckpointTest, HighestFoldWithAManifest) {
  const fs::path dir =
      fs::temp_directory_path() / absl::StrCat("flashtick_arm_ckpt_", ::getpid());
  fs::remove_all(dir);
  EXPECT_EQ(FinalArmCheckpoint(dir.string()).status().code(), absl::StatusCode::kNotFound);
  for (const char* leaf : {"ckpt-f0", "ckpt-f2", "ckpt-f10", "ckpt-f11", "ckpt-fx", "model"}) {
    fs::create_directories(dir / leaf);
  }
  for (const char* leaf : {"ckpt-f0", "ckpt-f2", "ckpt-f10", "ckpt-fx", "model"}) {
    std::ofstream(dir / leaf / "manifest.json") << "{}";
  }
  auto found = FinalArmCheckpoint(dir.string());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, (dir / "ckpt-f10").string());  // f11 has no manifest yet
  fs::remove_all(dir);
}

}  // namespace
}  // namespace flashtick
