// WindowSampler's context curriculum (research/sweep/window_sampler.h): the window
// CurriculumWindow(s) is a halving of N at or above the geometric schedule, reaches N at
// the end of the warmup and stays there; a batch of shorter windows holds exactly the
// tails of the full windows ending at the same drawn samples (the curriculum changes
// how much is seen, not which samples are).
#include "research/sweep/window_sampler.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "research/labels/deeplob.h"

namespace flashtick {
namespace {

TEST(CurriculumWindow, HalvingsOfNThatGrowToN) {
  EXPECT_EQ(CurriculumWindow(32768, 1024, 0, 0), 32768) << "no warmup: full windows";
  EXPECT_EQ(CurriculumWindow(512, 1024, 100, 0), 512) << "a start past N: full windows";
  EXPECT_EQ(CurriculumWindow(32768, 1024, 100, 0), 1024);
  EXPECT_EQ(CurriculumWindow(32768, 1024, 100, 50), 8192);  // g = 1024 · 32^(1/2) = 5793
  EXPECT_EQ(CurriculumWindow(32768, 1024, 100, 99), 32768);
  EXPECT_EQ(CurriculumWindow(32768, 1024, 100, 100), 32768);
  EXPECT_EQ(CurriculumWindow(32768, 1024, 100, 5000), 32768);
  EXPECT_EQ(CurriculumWindow(23400, 1000, 100, 0), 2925) << "halving stops at an odd length";
  int64_t last = 0;
  for (int64_t s = 0; s <= 120; ++s) {
    const int64_t w = CurriculumWindow(32768, 1000, 100, s);
    EXPECT_GE(w, last) << "step " << s;
    EXPECT_GE(w, 1000);
    EXPECT_EQ(32768 % w, 0) << "a window that divides N keeps the batch whole";
    last = w;
  }
}

TEST(WindowSampler, ShortWindowsAreTheFullWindowsTails) {
  const int F = 3;
  const int64_t days = 3, steps = 40, n = 16, batch = 5;
  std::vector<float> features(days * steps * F);
  for (size_t i = 0; i < features.size(); ++i) features[i] = 1.0f + static_cast<float>(i);
  std::vector<int64_t> offsets = {0, steps, 2 * steps};
  Fold fold;
  fold.train_days = {0, 1, 2};
  std::vector<std::vector<int8_t>> labels(days, std::vector<int8_t>(steps, kFlat));
  for (int d = 0; d < days; ++d) fold.train.push_back({d, 2, steps - 3});
  labels[1][7] = kUp;
  WindowSampler s(&features, F, offsets, fold, labels, n);
  for (int64_t step = 0; step < 6; ++step) {
    std::vector<float> full_x, part_x;
    std::vector<int32_t> full_y, part_y;
    s.Batch(9, 0, step, batch, &full_x, &full_y);
    for (int64_t w : {int64_t{1}, int64_t{5}, n - 1, n}) {
      s.Batch(9, 0, step, batch, &part_x, &part_y, w);
      ASSERT_EQ(part_x.size(), static_cast<size_t>(batch * w * F));
      ASSERT_EQ(part_y.size(), static_cast<size_t>(batch * w));
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < w; ++i) {
          const size_t r = static_cast<size_t>(b * w + i);
          const size_t full = static_cast<size_t>(b * n + (n - w) + i);
          EXPECT_EQ(part_y[r], full_y[full]) << "window " << w << " row " << i;
          for (int f = 0; f < F; ++f) {
            EXPECT_EQ(part_x[r * F + f], full_x[full * F + f]) << "window " << w << " row " << i;
          }
        }
        // The window's last row is always a real, labelled training sample.
        EXPECT_NE(part_y[static_cast<size_t>(b * w + w - 1)], -1);
      }
    }
  }
}

}  // namespace
}  // namespace flashtick
