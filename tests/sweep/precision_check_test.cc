// RunPrecisionCheck (research/sweep/precision_check.h) on the CPU backend: float32
// against the float64 reference agrees to float32 rounding over the windows asked for,
// its stop callback is asked during the forwards, and a stop that says yes ends the
// check with CANCELLED instead of a report.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "model/transformer.h"
#include "research/sweep/precision_check.h"
#include "tests/model/small_decode_model.h"
#include "ticks/features.h"

namespace flashtick {
namespace {

constexpr int64_t kContext = 32;

class PrecisionCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/precision_check_" + std::to_string(getpid());
    auto cpu = CreateBackend("cpu", BackendOptions{});
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    backend_ = *std::move(cpu);
    auto model = Transformer::InitRandom(testing::SmallDecodeConfig(), 11, backend_.get());
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE((*model)->Save(dir_).ok());
    features_ = testing::RandomRows(200, kNumFeatures, 5);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  absl::StatusOr<PrecisionReport> Check(const std::function<bool()>& stop) {
    // Three windows, two of them checked (max_windows), 8 scored rows each.
    std::vector<EvalWindow> windows = {{63, 8}, {127, 8}, {191, 8}};
    return RunPrecisionCheck(dir_, backend_.get(), features_, windows, kContext, /*batch=*/2,
                             /*max_windows=*/2, /*reference_threads=*/1, stop);
  }

  std::string dir_;
  std::unique_ptr<Backend> backend_;
  std::vector<float> features_;
};

TEST_F(PrecisionCheckTest, Float32AgreesWithTheFloat64ReferenceAndAsksStop) {
  int asked = 0;
  auto r = Check([&asked] {
    ++asked;
    return false;
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ran) << r->note;
  EXPECT_EQ(r->windows, 2);
  EXPECT_EQ(r->positions, 16);
  EXPECT_EQ(r->reference_dtype, "fp64");
  EXPECT_LT(r->max_rel_logit_error, 1e-4) << "float32 against float64 on the CPU";
  EXPECT_EQ(r->flips, 0);
  // Two layers: asked once per forward call (one batch of 2 windows on the float32 model,
  // two of 1 on the reference).
  EXPECT_EQ(asked, 3);
}

TEST_F(PrecisionCheckTest, AStopThatSaysYesEndsItCancelled) {
  auto r = Check([] { return true; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
}

}  // namespace
}  // namespace flashtick
