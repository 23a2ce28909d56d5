// WindowSampler's context curriculum (train/sweep/window_sampler.h): the schedule
// c(s) grows geometrically from its start to N and then stays at N, and a batch with
// `visible` rows is the full batch with its leading N − visible rows zeroed and
// unlabelled (the same windows drawn, so the curriculum changes what is seen, not
// which samples are).
#include "train/sweep/window_sampler.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "train/labels/deeplob.h"

namespace flashtick {
namespace {

TEST(VisibleContext, GrowsGeometricallyToN) {
  EXPECT_EQ(VisibleContext(32768, 1024, 0, 0), 32768) << "no warmup: full windows";
  EXPECT_EQ(VisibleContext(512, 1024, 100, 0), 512) << "a start past N: full windows";
  EXPECT_EQ(VisibleContext(32768, 1024, 100, 0), 1024);
  EXPECT_EQ(VisibleContext(32768, 1024, 100, 50), 5793);  // 1024 · 32^(1/2) = 5792.6
  EXPECT_EQ(VisibleContext(32768, 1024, 100, 100), 32768);
  EXPECT_EQ(VisibleContext(32768, 1024, 100, 5000), 32768);
  int64_t last = 0;
  for (int64_t s = 0; s <= 120; ++s) {
    const int64_t c = VisibleContext(32768, 1024, 100, s);
    EXPECT_GE(c, last) << "step " << s;
    EXPECT_GE(c, 1024);
    EXPECT_LE(c, 32768);
    last = c;
  }
}

TEST(WindowSampler, VisibleRowsAreTheFullWindowsTail) {
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
    for (int64_t visible : {int64_t{1}, int64_t{5}, n - 1, n}) {
      s.Batch(9, 0, step, batch, &part_x, &part_y, visible);
      ASSERT_EQ(part_x.size(), full_x.size());
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < n; ++i) {
          const bool shown = i >= n - visible;
          const size_t r = static_cast<size_t>(b * n + i);
          EXPECT_EQ(part_y[r], shown ? full_y[r] : -1) << "visible " << visible << " row " << i;
          for (int f = 0; f < F; ++f) {
            EXPECT_EQ(part_x[r * F + f], shown ? full_x[r * F + f] : 0.0f)
                << "visible " << visible << " row " << i;
          }
        }
        // The window's last row is always a real, labelled training sample.
        EXPECT_NE(part_y[static_cast<size_t>(b * n + n - 1)], -1);
      }
    }
  }
}

}  // namespace
}  // namespace flashtick
